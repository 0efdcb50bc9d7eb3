"""One module per subcommand; each has ``add_arguments(parser)`` and ``run(args) -> int``.

They are imported only when their subcommand runs, so ``vramlint FILE`` does not pay for the others.
"""
