"""vramlint: lint vLLM deployments against the GPU memory budget vLLM computes at start-up."""

__version__ = "0.1.0"
