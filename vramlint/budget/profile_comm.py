"""The communication memory of a multi-GPU engine, part of stage 3 (:mod:`vramlint.budget.profile`).

What each rank of a tensor-, pipeline-, data- or expert-parallel engine allocates for communication, and which
part of it vLLM's profiler counts as non-torch memory, release by release:

* **NCCL communicators.** ``init_worker_distributed_environment`` builds a ``GroupCoordinator`` per parallel
  group; each group of more than one rank gets a ``PyNcclCommunicator`` that runs a warm-up all-reduce in its
  constructor (the world group has no device communicator: ``init_world_group(use_device_communicator=False)``).
  The profile run then makes the first collective on the tensor-parallel group's ``torch.distributed`` NCCL
  process group (``DeviceCommunicatorBase.all_gather`` / ``gather`` for the logits), and PyTorch creates its own
  NCCL communicator for it; from 0.26 ``CudaCommunicator.all_gather`` takes the PyNccl communicator instead
  (the 0.26.0 and 0.27.1 wheels; 0.25.0 still falls back to the base class), so no communicator is made there
  on CUDA (P03, 0.26 at TP 4 on H100: 0.13 GiB of non-torch memory logged). Pipeline stages exchange nothing
  in the profile run: each stage runs on dummy intermediate tensors (``make_empty_intermediate_tensors``: V1
  ``GPUModelRunner._dummy_run`` in the 0.11.0, 0.18.0, 0.19.0, 0.20.0 and 0.27.1 wheels; V0
  ``ModelRunner._dummy_run`` in 0.8.5, whose sends are in ``LocalOrDistributedWorkerBase.execute_model``, the
  serving path), so the pipeline group gets no second communicator there (0.07 GiB of non-torch memory on both
  stages of P75's H100 PP 2 log, 0.19.0). One communicator holds, per
  channel, the receive buffers of its ring and tree connections, for each protocol: ``NCCL_LL_BUFFSIZE``
  (default 512 KiB), ``NCCL_LL128_BUFFSIZE`` (4,915,200 B) and ``NCCL_BUFFSIZE`` (4 MiB), NCCL's
  ``DEFAULT_*BUFFSIZE`` in src/init.cc. The number of channels NCCL picks from the topology at run time, which a
  manifest does not show; vramlint assumes 24 on NVLink/NVSwitch parts (A100 SXM, H100 SXM, H200, H20, B200)
  and 2 over PCIe. The 24 is backed out of one log (the llm-d H100 TP 2 run on vLLM 0.11: non-torch 0.55 GiB
  against 0.13 GiB at TP 1, one profile-run communicator of 0.42 GiB); it is the figure most likely to be off on
  another machine. ``NCCL_MIN_NCHANNELS`` / ``NCCL_MAX_NCHANNELS`` and the three buffer sizes are read from the
  environment. NVLink SHARP (NVLS) buffers and NCCL's own device allocations (kernels, work queues) are not
  estimated.
* **The expert-parallel group** ("ep", TP x DP ranks): built for every model from 0.9.2 and for MoE models
  only from 0.14, with a PyNccl communicator of its own from 0.11 (:func:`expert_group_communicator`), whether
  or not ``--enable-expert-parallel`` is given: the P108 log (gpt-oss-20b at TP 2 on H100, 0.19.0) shows 2.01 GiB
  in use at the snapshot on each rank against 0.51 at TP 1.
* **Custom all-reduce** (``CustomAllreduce``, tensor-parallel group only): two IPC buffers of ``max_size`` (8 MiB,
  lowered on compute capability 9.0 / 10.0 / 10.3 by ``CUSTOM_ALL_REDUCE_MAX_SIZES`` when symmetric memory is
  on) allocated with cudaMalloc; used for 2, 4, 6 or 8 ranks, when all GPUs are NVLink-connected or there are
  two (PCIe peer-to-peer; GeForce cards have none), and not with ``--disable-custom-all-reduce``.
* **Symmetric memory** (0.11+, ``VLLM_ALLREDUCE_USE_SYMM_MEM``, default on; compute capability 9.0 and 10.0):
  one buffer of ``SYMM_MEM_ALL_REDUCE_MAX_SIZES[cc][ranks]`` (32 - 128 MiB).
* **FlashInfer's all-reduce + RMSNorm fusion workspace** (0.18+ at -O2 on NVSwitch Hopper / Blackwell): made
  while the profile run compiles the model, so counted as non-torch memory (:func:`flashinfer_fusion_workspace`).

When it is counted: V0 and V1 up to 0.10 take the baseline snapshot before the distributed set-up, so all of
it is non-torch memory; V1 0.11+ takes it after ("Now take memory snapshot after NCCL is initialized",
``gpu_worker.py::init_device``), so only the profile run's communicators are, and the rest is taken from the free
memory the start-up check compares with ``total x gpu_memory_utilization``, and from the headroom above it.

Without the custom all-reduce (or symmetric memory), the tensor-parallel all-reduces captured into CUDA graphs
go through NCCL, which takes device memory per captured collective: see
:func:`vramlint.budget.profile_graphs.nccl_graph_bytes`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vramlint import versions
from vramlint.budget.common import GiB, config_arg, truthy
from vramlint.model import GpuSpec

VLLM_SOURCES = (
    "vllm/distributed/parallel_state.py::init_world_group, GroupCoordinator (communicators per parallel group)",
    "vllm/distributed/device_communicators/pynccl.py::PyNcclCommunicator.__init__ (warm-up all-reduce)",
    "vllm/distributed/device_communicators/base_device_communicator.py::all_gather / gather (torch.distributed)",
    "vllm/distributed/device_communicators/custom_all_reduce.py::CustomAllreduce.__init__ (buffers, topology)",
    "vllm/distributed/device_communicators/all_reduce_utils.py: CUSTOM_ALL_REDUCE_MAX_SIZES, "
    "SYMM_MEM_ALL_REDUCE_MAX_SIZES (0.11+)",
    "vllm/v1/worker/gpu_worker.py::init_device: snapshot before (<= 0.10) / after (0.11+) the NCCL set-up",
    "vllm/config/vllm.py::enable_allreduce_rms_fusion (0.18 - 0.20: the -O2 / -O3 default of "
    "pass_config.fuse_allreduce_rms), vllm/compilation/passes/fusion/allreduce_rms_fusion.py, "
    "vllm/distributed/device_communicators/flashinfer_all_reduce.py (FlashInfer's fusion workspace, created "
    "while the profile run compiles the model)",
)
# Outside vLLM: where the per-connection buffer sizes come from.
NCCL_SOURCES = (
    "NCCL src/init.cc: DEFAULT_LL_BUFFSIZE, DEFAULT_LL128_BUFFSIZE, DEFAULT_BUFFSIZE; NCCL_*BUFFSIZE, "
    "NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS",
    "FlashInfer 0.6.6 / 0.6.8.post1 (the pins of vLLM 0.18 - 0.21): comm/allreduce.py::"
    "TRTLLMAllReduceFusionWorkspace (use_symm_dev_mem=True), comm/trtllm_ar.py::"
    "trtllm_create_ipc_workspace_for_all_reduce_fusion (three buffers), comm/mnnvl.py::SymmDeviceMemory."
    "_get_allocation_prop (each rounded up to cuMulticastGetGranularity(..., RECOMMENDED))",
    "FlashInfer 0.6.11.post2 - 0.6.14 (vLLM 0.22 - 0.26): comm/torch_symmetric_memory.py::_alloc_symm_buffer_bytes "
    "(torch symm_mem.empty: PyTorch's CUDASymmetricMemoryAllocator::alloc, allocation granularity); 0.6.16.post3+ "
    "(vLLM 0.27+): SymmDeviceMemory with enable_multicast=False (no multicast rounding)",
    "vllm/compilation/passes/fusion/allreduce_rms_fusion.py: FI_ALLREDUCE_FUSION_MAX_SIZE_MB, "
    "AllReduceFusionPass.__init__ (max_token_num = min(max size / (hidden x dtype), max_num_batched_tokens)); "
    "vllm/config/compilation.py::PassConfig.flashinfer_max_size (fi_allreduce_fusion_max_size_mb), 0.18.0 - 0.20.0",
    "FlashInfer 0.6.13 / 0.6.14 (vLLM 0.25 / 0.26) and 0.6.16.post3 (vLLM 0.27): comm/trtllm_mnnvl_ar.py::"
    "MNNVLAllReduceFusionWorkspace (three lamport buffers, get_required_buffer_size_bytes; McastGPUBuffer in "
    "0.6.16.post3), comm/mnnvl.py::SymmDeviceMemory._get_allocation_prop, comm/allreduce.py::"
    "create_allreduce_fusion_workspace; "
    "vllm/distributed/device_communicators/flashinfer_all_reduce.py::get_fi_ar_quant_workspace (0.25: a TRT-LLM "
    "workspace of its own on one node; 0.26: the primary one reused)",
    "vllm/distributed/device_communicators/flashinfer_all_reduce.py::_resolve_fi_ar_backend (trtllm on one node "
    "0.19 - 0.24, mnnvl from 0.25: 0.21.0, 0.24.0, 0.25.0, 0.26.0, 0.27.1, 0.33.0 wheels)",
)
# The releases whose wheels were read for the FlashInfer all-reduce fusion workspace (0.18.0, 0.19.0, 0.20.0,
# 0.21.0, 0.24.0, 0.25.0, 0.26.0, 0.27.1, 0.33.0; the default stays on through 0.33, and 0.34.0's
# enable_allreduce_rms_fusion is 0.33's: the pass runs, its workspace's size not read, a note as for 0.28+).
FI_ALLREDUCE_FUSION_RELEASES = ((0, 18), (0, 35))
FI_ALLREDUCE_FUSION_WORLD_SIZES = (2, 4, 8)  # PassConfig.flashinfer_max_size: FI_SUPPORTED_WORLD_SIZES
# allreduce_rms_fusion.py::FI_ALLREDUCE_FUSION_MAX_SIZE_MB, MB by compute capability and world size (0.18.0 -
# 0.27.1 wheels alike; the 10.3 row from 0.19; 0.33.0 has 4 MB for 10.3 at TP 8). The 16-rank mnnvl entries of
# 10.0 and 10.3 (in the 0.25.0, 0.26.0 and 0.27.1 wheels) are not modelled: FI_ALLREDUCE_FUSION_WORLD_SIZES stops
# at 8.
# A world size missing here disables the pass.
FI_ALLREDUCE_FUSION_MAX_SIZE_MB = {
    "9.0": {2: 64, 4: 2, 8: 0.5},
    "10.0": {2: 64, 4: 32, 8: 1},
    "10.3": {2: 64, 4: 64, 8: 2},
}
# trtllm_ar.py (FlashInfer 0.6.6 / 0.6.8.post1): BarrierFlagCount int32 flags per rank, the lamport buffer's cap
# (MAX_INT32 rounded down to 2 MiB), the 2 MiB alignment of every buffer, and SymmDeviceMemory's signal pad.
FI_BARRIER_FLAGS = 256
FI_MAX_COMM_SIZE = 2147483647 & ~((1 << 21) - 1)
FI_BUFFER_ALIGN = 1 << 21
FI_SIGNAL_PAD = 2048
# cuMulticastGetGranularity(..., CU_MULTICAST_GRANULARITY_RECOMMENDED), the unit each SymmDeviceMemory buffer is
# rounded up to. The driver returns it and no source states it, so it is backed out of two public logs of the
# llm-d-planner 0.19.0 H100 sweep (P73, P74, in-sample for it): Llama-3.1-8B's profiler counts 2.07 GiB of
# non-torch memory at TP 2 (buffers of 128, 2 and 384 MiB) and 2.13 GiB at TP 4 (8, 2 and 24 MiB). Buffers this
# different cost the same only if each takes one unit of at least 386 MiB (384 MiB and the signal pad), and three
# units beside the profile run's NCCL communicator (0.43 GiB estimated) fit in 2.07 GiB only below 560 MiB:
# 512 MiB is the one power of two between. Hopper only: no Blackwell log states its non-torch memory with the
# pass on.
FI_MULTICAST_GRANULARITY = {"9.0": 512 << 20}
# From vLLM 0.22 (FlashInfer 0.6.11.post2 - 0.6.14: torch.distributed._symmetric_memory.empty, whose
# CUDASymmetricMemoryAllocator::alloc rounds the buffer and its signal pad up to the allocation granularity the
# driver recommends; 0.6.16+: SymmDeviceMemory rounding to the multicast granularity only with
# enable_multicast, which the TRT-LLM workspace passes False) each buffer takes whole 2 MiB pages: the 2 MiB
# alignment FlashInfer's own comment states for these allocations (trtllm_ar.py, 0.6.6).
FI_ALLOCATION_GRANULARITY = 2 << 20
# comm/trtllm_mnnvl_ar.py (FlashInfer 0.6.13 / 0.6.14): MNNVL_ONE_SHOT_THRESHOLD (64 x 1024 x 8 x 2 B) and
# MNNVLAllReduceFusionWorkspace.NUM_LAMPORT_BUFFERS.
MNNVL_ONE_SHOT_THRESHOLD = 64 * 1024 * 8 * 2
MNNVL_LAMPORT_BUFFERS = 3

MiB = 1 << 20
# NCCL's per-connection buffers by protocol (LL, LL128, SIMPLE): 8 lines x 512 threads x 8 steps x 16 B;
# 120 elements x 640 threads x 8 steps x 8 B; 4 MiB.
NCCL_DEFAULT_BUFFSIZES = {"NCCL_LL_BUFFSIZE": 8 * 512 * 8 * 16, "NCCL_LL128_BUFFSIZE": 120 * 640 * 8 * 8,
                          "NCCL_BUFFSIZE": 4 * MiB}
# Receive connections per channel on one rank: the ring's and the tree's (intra-node, a chain).
NCCL_CONNECTIONS_PER_CHANNEL = 2
NCCL_CHANNELS = {"nvlink": 24, "pcie": 2}
CUSTOM_ALL_REDUCE_MAX_SIZE = 8 * MiB
# vllm/distributed/device_communicators/all_reduce_utils.py (0.11 - 0.21); 10.3 from 0.21.
CUSTOM_ALL_REDUCE_MAX_SIZES = {
    "9.0": {2: 64 * MiB, 4: 32 * MiB, 6: MiB // 2, 8: MiB // 4},
    "10.0": {2: 2 * MiB, 4: 2 * MiB, 6: 1 * MiB, 8: 1 * MiB},
    "10.3": {2: 4 * MiB, 4: 4 * MiB, 6: 8 * MiB, 8: 4 * MiB},
}
SYMM_MEM_ALL_REDUCE_MAX_SIZES = {
    "9.0": {2: 64 * MiB, 4: 32 * MiB, 6: 64 * MiB, 8: 64 * MiB},
    "10.0": {2: 8 * MiB, 4: 32 * MiB, 6: 128 * MiB, 8: 128 * MiB},
}
# Catalog GPUs whose multi-GPU servers connect every GPU by NVLink / NVSwitch (the SXM and superchip parts).
NVLINK_GPUS = ("A100-40GB", "A100-80GB", "A800-80GB", "H100-SXM", "H800", "H200", "H20", "H20-141GB", "B200", "B300", "GB200",
               "GB300", "GH200", "GH200-144GB")
# GeForce cards: no peer-to-peer access, so no custom all-reduce even for two of them.
_GEFORCE_RE = re.compile(r"^RTX-[2345]0[5-9]0")


@dataclass(frozen=True)
class Communication:
    """Communication memory on one rank, bytes: ``counted`` is in vLLM's non-torch figure, ``before_snapshot``
    was allocated before vLLM's baseline (0.11+) and is not; ``nccl_in_graphs``: the tensor-parallel all-reduces
    captured into CUDA graphs are NCCL's."""

    counted: int
    before_snapshot: int
    nccl_in_graphs: bool
    how: str


def interconnect(gpu: GpuSpec) -> str:
    """"nvlink" for the parts whose servers connect all GPUs by NVLink, "pcie" otherwise (unknown GPUs too)."""
    return "nvlink" if gpu.name in NVLINK_GPUS else "pcie"


def nccl_communicator_bytes(gpu: GpuSpec, env: dict) -> tuple[int, str]:
    """Device buffers of one NCCL communicator on one rank: channels x connections x (LL + LL128 + SIMPLE)."""
    link = interconnect(gpu)
    channels = NCCL_CHANNELS[link]
    low, high = _env_int(env, "NCCL_MIN_NCHANNELS"), _env_int(env, "NCCL_MAX_NCHANNELS")
    if high:
        channels = min(channels, high)
    if low:
        channels = max(channels, low)
    per_connection = sum(_env_int(env, name) or default for name, default in NCCL_DEFAULT_BUFFSIZES.items())
    total = channels * NCCL_CONNECTIONS_PER_CHANNEL * per_connection
    return total, f"{channels} channels ({link}) x {NCCL_CONNECTIONS_PER_CHANNEL} x {per_connection / MiB:.2f} MiB"


# AMD parts on which vLLM's ROCm platform enables the custom all-reduce (RocmPlatform.use_custom_allreduce: gfx94x
# and gfx95x, the MI300 series and MI355X; 0.11.0 and 0.28.0 alike). Their 8-GPU OAM platforms connect every pair
# of GPUs by one xGMI hop, the ``is_fully_connected`` test CustomAllreduce makes for more than two ranks; the P2P
# test is skipped on ROCm (custom_all_reduce.py: "On AMD GPU, p2p is always enabled between XGMI connected GPUs").
ROCM_CUSTOM_ALL_REDUCE_GPUS = ("MI300X", "MI325X", "MI355X")


def custom_all_reduce(gpu: GpuSpec, tp: int, args: dict) -> bool:
    """Whether vLLM sets up its custom all-reduce for ``tp`` ranks of ``gpu`` (``CustomAllreduce.__init__``)."""
    if tp not in (2, 4, 6, 8) or truthy(args.get("disable_custom_all_reduce")):
        return False
    if gpu.vendor == "amd":
        return gpu.name in ROCM_CUSTOM_ALL_REDUCE_GPUS
    if gpu.vendor != "nvidia":
        return False
    if interconnect(gpu) == "nvlink":
        return True
    return tp == 2 and not _GEFORCE_RE.match(gpu.name)


def symmetric_memory_bytes(beh: versions.Behavior, gpu: GpuSpec, tp: int, env: dict) -> int:
    """The symmetric-memory all-reduce buffer of the tensor-parallel group (0 when vLLM does not create it)."""
    if tp < 2 or beh.engine != "v1" or not versions.at_least(beh.key, 0, 11) or gpu.vendor != "nvidia":
        return 0  # CudaCommunicator creates the SymmMemCommunicator on CUDA only (current_platform.is_cuda())
    if env.get("VLLM_ALLREDUCE_USE_SYMM_MEM") is not None and not truthy(env.get("VLLM_ALLREDUCE_USE_SYMM_MEM")):
        return 0
    return SYMM_MEM_ALL_REDUCE_MAX_SIZES.get(_cc(gpu), {}).get(tp, 0)


def expert_group_communicator(beh: versions.Behavior, tp: int, dp: int, moe: bool, expert_parallel: bool) -> bool:
    """Whether the expert-parallel group (TP x DP ranks) gets an NCCL communicator of its own at start-up.

    ``initialize_model_parallel`` (vllm/distributed/parallel_state.py) builds the "ep" group for every model from
    0.9.2 (no flag asks for it) and, from 0.14, for MoE models only ("Don't create EP group for dense models");
    ``CudaCommunicator`` gives it no PyNccl communicator up to 0.10 (``use_pynccl = "ep" not in unique_name``)
    and one from 0.11 (every group of more than one rank). Read in the 0.9.2, 0.10.0, 0.11.0, 0.13.0, 0.14.0,
    0.15.0, 0.17.0, 0.19.0, 0.20.0, 0.27.1 and 0.28.0 wheels. Up to 0.10 an expert-parallel MoE layer's all-to-all
    makes torch.distributed's communicator for the group instead (``expert_parallel``)."""
    if tp * dp <= 1:
        return False
    if beh.engine == "v1" and versions.at_least(beh.key, 0, 11):
        return moe or expert_parallel or not versions.at_least(beh.key, 0, 14)
    return expert_parallel


def communication_memory(beh: versions.Behavior, gpu: GpuSpec, tp: int, pp: int, dp: int, args: dict, env: dict,
                         expert_parallel: bool = False, moe: bool = False) -> Communication:
    """The communication memory of one rank and how much of it vLLM counts (see the module docstring)."""
    if tp * pp * dp <= 1:
        return Communication(0, 0, False, "one GPU: no communicators")
    comm, comm_how = nccl_communicator_bytes(gpu, env)
    ep_group = expert_group_communicator(beh, tp, dp, moe, expert_parallel)
    groups = [size for size in (tp, pp, dp, tp * dp if ep_group else 1) if size > 1]
    symm = symmetric_memory_bytes(beh, gpu, tp, env)
    ca = custom_all_reduce(gpu, tp, args)
    ca_size = CUSTOM_ALL_REDUCE_MAX_SIZE
    if ca and symm:
        ca_size = min(ca_size, CUSTOM_ALL_REDUCE_MAX_SIZES.get(_cc(gpu), {}).get(tp, ca_size))
    init = len(groups) * comm + (2 * ca_size if ca else 0) + symm
    # the logits gather makes torch.distributed's own communicator for the TP group; pipeline stages send nothing
    # while profiling. From 0.26 CudaCommunicator.all_gather sends it through the PyNccl communicator set up at
    # start-up instead (not on ROCm, which keeps the base-class collective): 0.26.0 and 0.27.1 wheels, not 0.25.0
    pynccl_gather = gpu.vendor == "nvidia" and beh.engine == "v1" and versions.at_least(beh.key, 0, 26)
    profile_comms = 1 if tp > 1 and not pynccl_gather else 0
    during_profile = profile_comms * comm
    after_nccl = beh.engine == "v1" and versions.at_least(beh.key, 0, 11)
    parts = [f"{len(groups)} NCCL communicator(s) at start-up" + (" (one of them the expert-parallel group's)"
                                                                   if ep_group else "")
             + f" and {profile_comms} in the profile run, {comm / GiB:.2f} GiB each ({comm_how})"]
    if ca:
        parts.append(f"custom all-reduce 2 x {ca_size // MiB} MiB")
    if symm:
        parts.append(f"symmetric memory {symm // MiB} MiB")
    if after_nccl:
        how = (f"{'; '.join(parts)}; vLLM {beh.version} counts only the profile run's "
               f"({during_profile / GiB:.2f} GiB), the {init / GiB:.2f} GiB set up before its snapshot come out of "
               "the free memory")
        counted, before = during_profile, init
    else:
        how = f"{'; '.join(parts)}; vLLM {beh.version} counts all of it"
        counted, before = init + during_profile, 0
    nccl_in_graphs = tp > 1 and not ca and not symm
    return Communication(counted=counted, before_snapshot=before, nccl_in_graphs=nccl_in_graphs, how=how)


def flashinfer_allreduce_fusion(beh: versions.Behavior, gpu: GpuSpec, tp: int, pp: int, dp: int, args: dict,
                                env: dict | None = None) -> bool:
    """Whether the profile run of vLLM 0.18 - 0.34 creates FlashInfer's all-reduce + RMSNorm fusion workspace.

    ``enable_allreduce_rms_fusion`` (vllm/config/vllm.py) turns ``pass_config.fuse_allreduce_rms`` on at the -O2
    (default) and -O3 levels when TP > 1 on CUDA with FlashInfer installed (a dependency of the wheels) and
    compute capability 9.0 or 10.0 (the 10.x family from 0.19), without data or pipeline parallel up to 0.20
    (the 0.21.0 wheel drops that condition; 0.33.0 adds VLLM_BATCH_INVARIANT, which turns it off); the pass runs
    when the first forward pass of the profile run compiles the model (not with --enforce-eager, which sets the
    compilation mode to none), for 2, 4 or 8 ranks. Its workspace is symmetric memory: FlashInfer's
    ``SymmDeviceMemory`` raises on a GPU without multicast (no NVSwitch) and vLLM then goes on without it."""
    key = beh.key
    env = env or {}
    low, high = FI_ALLREDUCE_FUSION_RELEASES
    if beh.engine != "v1" or not versions.at_least(key, *low) or versions.at_least(key, *high):
        return False
    if gpu.vendor != "nvidia" or tp not in FI_ALLREDUCE_FUSION_WORLD_SIZES:
        return False
    if (pp != 1 or dp != 1) and not versions.at_least(key, 0, 21):
        return False
    cc = tuple(gpu.compute_capability)
    if not (cc == (9, 0) or cc == (10, 0) or (cc[0] == 10 and versions.at_least(key, 0, 19))):
        return False
    if interconnect(gpu) != "nvlink" or truthy(args.get("enforce_eager")):
        return False
    if versions.at_least(key, 0, 33) and truthy(env.get("VLLM_BATCH_INVARIANT")):
        return False  # the fused path is not batch-invariant (0.33.0)
    level = args.get("optimization_level")
    if str(level).strip() in ("0", "1"):
        return False
    cc_args = config_arg(args, "compilation_config")
    if isinstance(cc_args, dict):
        mode = cc_args.get("mode", cc_args.get("level"))
        if mode is not None and str(mode).strip().upper() in ("0", "NONE", "1", "2", "STOCK_TORCH_COMPILE",
                                                              "DYNAMO_TRACE_ONCE"):
            return False
        passes = cc_args.get("pass_config")
        if isinstance(passes, dict) and "fuse_allreduce_rms" in passes and not truthy(passes["fuse_allreduce_rms"]):
            return False
    return True


def flashinfer_fusion_workspace(beh: versions.Behavior, gpu: GpuSpec, tp: int, hidden: int, dtype_bytes: int,
                                max_num_batched_tokens: int, args: dict, env: dict) -> tuple[int | None, str]:
    """Bytes of FlashInfer's all-reduce fusion workspace on one rank, where :func:`flashinfer_allreduce_fusion`
    says the profile run creates it; ``None`` where its size is not known (the reason is the second item).

    ``AllReduceFusionPass.__init__`` asks for ``max_token_num = min(max size // (hidden x dtype bytes),
    max_num_batched_tokens)`` tokens, the max size from ``--compilation-config``'s
    ``pass_config.fi_allreduce_fusion_max_size_mb`` or FI_ALLREDUCE_FUSION_MAX_SIZE_MB; on one node vLLM takes
    FlashInfer's ``trtllm`` backend (the 0.18 default, what "auto" resolves to in 0.19 - 0.24; from 0.25 "auto"
    is ``mnnvl``: :func:`_mnnvl_workspace_bytes` for 0.25 - 0.27, with 0.25's separate TRT-LLM quant-fusion
    workspace beside it on one node, in the multicast granularity from 0.27; 0.28+ are not read), whose
    ``trtllm_create_ipc_workspace_for_all_reduce_fusion`` makes three symmetric buffers: ranks x tokens x hidden x 2 B, ranks x 256 x 4 B of flags, and three lamport
    copies of ranks x tokens x hidden x 2 B (4 B for an fp32 model), each with a 2 KiB signal pad; up to vLLM 0.21
    (FlashInfer 0.6.6 / 0.6.8.post1) SymmDeviceMemory rounds each up to the multicast granularity, from 0.22 to
    2 MiB pages. The quant-fusion workspace reuses the same one (``get_fi_ar_quant_workspace``). cuMemCreate
    memory, outside PyTorch's allocator: non-torch memory of the profile run."""
    max_mb = None
    cc_args = config_arg(args, "compilation_config")
    passes = cc_args.get("pass_config") if isinstance(cc_args, dict) else None
    if isinstance(passes, dict) and passes.get("fi_allreduce_fusion_max_size_mb") is not None:
        try:
            max_mb = float(passes["fi_allreduce_fusion_max_size_mb"])
        except (TypeError, ValueError):
            return None, "pass_config.fi_allreduce_fusion_max_size_mb is not a number vramlint can read"
    cc = _cc(gpu)
    if cc == "10.3" and not versions.at_least(beh.key, 0, 19):
        sizes: dict = {}
    else:
        sizes = FI_ALLREDUCE_FUSION_MAX_SIZE_MB.get(cc, {})
    if max_mb is None:
        max_mb = sizes.get(tp)
    if not max_mb or max_mb <= 0:
        return 0, f"no FlashInfer fusion size for TP {tp} on compute capability {cc}: the pass disables itself"
    backend = str(env.get("VLLM_FLASHINFER_ALLREDUCE_BACKEND") or "").strip().lower() or (
        "trtllm" if not versions.at_least(beh.key, 0, 19) else "auto")
    nodes = _positive_int(args.get("nnodes")) or 1
    if backend == "auto":
        # flashinfer_all_reduce.py::_resolve_fi_ar_backend: trtllm on one node in 0.19 - 0.24, mnnvl (falling back
        # to trtllm without NVSwitch multicast) from 0.25
        backend = "mnnvl" if nodes > 1 or versions.at_least(beh.key, 0, 25) else "trtllm"
    element = 4 if dtype_bytes >= 4 else 2
    tokens = min(int(max_mb * MiB) // max(1, hidden * dtype_bytes), max_num_batched_tokens)
    if backend == "mnnvl":
        if not versions.at_least(beh.key, 0, 25) or versions.at_least(beh.key, 0, 28):
            return None, ("FlashInfer's mnnvl all-reduce workspace is sized otherwise (its allocation is read for "
                          "vLLM 0.25 - 0.27 only)")
        # 0.25 / 0.26 (FlashInfer 0.6.13 / 0.6.14): torch symmetric memory, whole pages; 0.27 (0.6.16.post3):
        # McastGPUBuffer, a multicast SymmDeviceMemory rounded up to the multicast granularity
        unit = FI_ALLOCATION_GRANULARITY if not versions.at_least(beh.key, 0, 27) else FI_MULTICAST_GRANULARITY.get(cc)
        if unit is None:
            return None, (f"FlashInfer's mnnvl workspace is one multicast buffer, rounded up to a multicast "
                          f"granularity that is the driver's and not known for compute capability {cc} (512 MiB on "
                          "Hopper, from public H100 logs)")
        mnnvl = _mnnvl_workspace_bytes(tp, tokens, hidden, element, unit)
        kind = "pages" if unit == FI_ALLOCATION_GRANULARITY else "multicast granularity"
        how = (f"FlashInfer mnnvl all-reduce workspace {mnnvl / GiB:.2f} GiB (3 lamport buffers for {tokens} tokens "
               f"x hidden {hidden} at TP {tp}, in {unit // MiB} MiB {kind})")
        if versions.at_least(beh.key, 0, 26) or nodes > 1:
            # 0.26+: the quant-fusion workspace reuses the primary one of the same backend; 0.25 across nodes: none
            return mnnvl, how + f"; created in the profile run, counted by vLLM {beh.version}"
        # 0.25 on one node: get_fi_ar_quant_workspace always builds a TRT-LLM workspace of its own beside it
        trtllm = _trtllm_workspace_bytes(beh, cc, tp, tokens, hidden, element)
        if trtllm is None:
            return None, ("the TRT-LLM quant-fusion workspace created beside the mnnvl one is rounded up to a "
                          f"granularity not known for compute capability {cc}")
        total = trtllm[0]
        return mnnvl + total, (how + f" and the TRT-LLM quant-fusion workspace {total / GiB:.2f} GiB beside it "
                               f"(get_fi_ar_quant_workspace, vLLM 0.25); created in the profile run, counted by vLLM "
                               f"{beh.version}")
    if backend != "trtllm":
        return None, f"FlashInfer's {backend} all-reduce workspace is sized otherwise"
    trtllm = _trtllm_workspace_bytes(beh, cc, tp, tokens, hidden, element)
    if trtllm is None:
        return None, (f"the multicast granularity its buffers are rounded up to is the driver's and not known for "
                      f"compute capability {cc} (512 MiB on Hopper, from public H100 logs)")
    total, sizes_b, granularity = trtllm
    unit = "multicast granularity" if granularity != FI_ALLOCATION_GRANULARITY else "allocation granularity"
    how = (f"FlashInfer all-reduce fusion workspace {total / GiB:.2f} GiB ({tokens} tokens x hidden {hidden}: "
           f"buffers of {', '.join(f'{_round_up(s, FI_BUFFER_ALIGN) / MiB:.0f}' for s in sizes_b)} MiB, each rounded "
           f"up to the {granularity // MiB} MiB {unit}; created in the profile run, counted by vLLM "
           f"{beh.version})")
    return total, how


def _trtllm_workspace_bytes(beh: versions.Behavior, cc: str, tp: int, tokens: int, hidden: int,
                            element: int) -> tuple[int, tuple[int, int, int], int] | None:
    """The TRT-LLM backend's three buffers (see :func:`flashinfer_fusion_workspace`), their sizes and the unit they
    are rounded up to; None where that unit is not known."""
    if versions.at_least(beh.key, 0, 22):
        granularity = FI_ALLOCATION_GRANULARITY
    else:
        granularity = FI_MULTICAST_GRANULARITY.get(cc)
    if granularity is None:
        return None
    lamport = min(tp * tokens * hidden * element, FI_MAX_COMM_SIZE) * 3
    sizes_b = (tp * tokens * hidden * 2, tp * FI_BARRIER_FLAGS * 4, lamport)
    align = FI_BUFFER_ALIGN if not versions.at_least(beh.key, 0, 22) else 16
    total = sum(_round_up(_round_up(_round_up(size, align) + FI_SIGNAL_PAD, FI_BUFFER_ALIGN), granularity)
                for size in sizes_b)
    return total, sizes_b, granularity


def _mnnvl_workspace_bytes(tp: int, tokens: int, hidden: int, element: int,
                           unit: int = FI_ALLOCATION_GRANULARITY) -> int:
    """FlashInfer's ``MNNVLAllReduceFusionWorkspace`` (comm/trtllm_mnnvl_ar.py, 0.6.13 / 0.6.14 and 0.6.16.post3,
    the pins of vLLM 0.25 / 0.26 and 0.27): three lamport buffers, each the larger of the one-shot size (every
    rank's tokens, up to ``MNNVL_ONE_SHOT_THRESHOLD`` = 1 MiB across the ranks) and the two-shot size (two stages of
    the tokens rounded up to a multiple of the ranks), in one symmetric allocation with its signal pad on top:
    torch symmetric memory in whole pages of the allocation granularity (0.6.13 / 0.6.14,
    ``_alloc_symm_buffer_bytes``), or a multicast ``SymmDeviceMemory`` rounded up to the multicast granularity
    (0.6.16.post3, ``McastGPUBuffer``; ``unit``)."""
    per_token = hidden * element
    one_shot_tokens = min(MNNVL_ONE_SHOT_THRESHOLD // max(1, tp * per_token), tokens)
    one_shot = one_shot_tokens * per_token * tp
    two_shot = 2 * (-(-tokens // tp)) * tp * per_token
    requested = max(one_shot, two_shot) * MNNVL_LAMPORT_BUFFERS
    return _round_up(_round_up(_round_up(requested, 16) + FI_SIGNAL_PAD, FI_ALLOCATION_GRANULARITY), unit)


def flashinfer_allreduce_fusion_note(tp: int, version: str, why: str) -> str:
    """What the fusion workspace is and why its size is not estimated."""
    return (f"vLLM {version} fuses the tensor-parallel all-reduce with RMSNorm through FlashInfer (TP {tp}, "
            "-O2 default): compiling the model in the profile run creates FlashInfer's fusion workspace, "
            "symmetric-memory buffers counted as non-torch memory; it is not estimated here: " + why + " (the "
            "TRT-LLM workspace takes 1.5 GiB per rank on H100 with vLLM 0.18 - 0.21, up to 0.5 GiB from 0.22); "
            "--compilation-config '{\"pass_config\": {\"fuse_allreduce_rms\": false}}' turns it off")


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def _positive_int(value) -> int | None:
    try:
        number = int(str(value).strip())
    except (TypeError, ValueError):
        return None
    return number if number > 0 else None


def _cc(gpu: GpuSpec) -> str:
    major, minor = gpu.compute_capability
    return f"{major}.{minor}"


def _env_int(env: dict, name: str) -> int | None:
    try:
        value = int(str(env.get(name, "")).strip())
    except ValueError:
        return None
    return value if value > 0 else None
