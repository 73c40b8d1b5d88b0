//===- Passes.td - passes on attn IR -----------------------*- tablegen -*-===//

#ifndef ATTN_TRANSFORMS_PASSES_TD
#define ATTN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnLowerToLinalg : Pass<"attn-lower-to-linalg"> {
  let summary = "Reference lowering of attn.sdpa, attn.mha and attn.gat to linalg";
  let description = [{
    Lowers every attn op to linalg on tensors, materialising the scores: the
    plain second path every faster lowering can be compared with (it shares
    the score math and the mask definitions with them; the oracle of the
    tests is the independent C++ reference in lib/Runtime).

    - `attn.mha` is first decomposed as by `attn-decompose-mha`.
    - `attn.sdpa`: `S = Q K^T` (a 5-d contraction over the grouped-query view
      `B x Hkv x G x Lq x E`, so GQA needs no copies), one elementwise generic
      that applies scale, Shaw term, additive bias, relative-position bias,
      ALiBi and the mask (`-inf`), a masked stable softmax (rows without any
      allowed key give 0 and `lse = -inf`), then `O = P V`. A graph mask is
      densified from its CSR into an `Lq x Lk` i1 tensor first.
    - `attn.gat`: dense `N x N` edge counts from the CSR (self loops replaced
      by one per node when `add_self_loops`), `H x N x N` LeakyReLU scores,
      a count-weighted masked softmax and the aggregation `alpha z`.

    Before:

    ```mlir
    %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>}
        : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>)
        -> tensor<1x2x8x4xf32>
    ```

    After (abridged):

    ```mlir
    %q5 = tensor.expand_shape %q [[0], [1, 2], [3], [4]] ...
    %qk = linalg.generic {iterator_types = [parallel x 5, reduction]} ins(%q5, %k ...)
    %s  = linalg.generic {iterator_types = [parallel x 5]} ins(%qk ...) {
      ... linalg.index ... arith.cmpi sle ... arith.select %allowed, %scaled, %ninf
    }
    %m  = linalg.generic ... arith.maximumf        // row max
    %p  = linalg.generic ... math.exp ... select   // guarded exp
    %l  = linalg.generic ... arith.addf            // row sum
    %pn = linalg.generic ... arith.divf ... select // normalise, 0 on empty rows
    %o5 = linalg.generic ins(%pn, %v ...)          // P V
    %o  = tensor.collapse_shape %o5 [[0], [1, 2], [3], [4]]
    ```

    Ops on f16 or bf16 tensors are computed in f32 (every lowering does
    this): their float operands are extended to f32, the op runs on f32, and
    the results are rounded back to the input type.

    Ops with dynamic shapes are rejected with an error naming the operand.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def AttnDecomposeMha : Pass<"attn-decompose-mha"> {
  let summary = "Decompose attn.mha into projections and attn.sdpa";
  let description = [{
    Rewrites `attn.mha` as projections (the row blocks `[Wq; Wk; Wv]` of the
    packed `in_proj_weight`, plus biases), an `attn.sdpa` with the mha's mask
    options, and the output projection. Each projection is one 2-d
    contraction over all `B*L` rows against the transposed weight block (the
    bias broadcast as its initial value), so register tiles span rows of
    every batch element and both operands are read along rows; in
    self-attention (query, key and value are one value) Q, K and V come from
    a single contraction with the whole packed weight. Heads are split by a
    copy into the `B x heads x L x hd` layout of `attn.sdpa`, merged back by
    another, and the out-projection is one more 2-d contraction.

    Before:

    ```mlir
    %y = attn.mha %x, %x, %x in_proj(%w, %b) out_proj(%wo, %bo)
        {num_heads = 2 : i64}
        : (tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<1x8x16xf32>,
           tensor<48x16xf32>, tensor<48xf32>, tensor<16x16xf32>, tensor<16xf32>)
        -> tensor<1x8x16xf32>
    ```

    After (abridged):

    ```mlir
    %wt = linalg.generic ins(%w : tensor<48x16xf32>) -> tensor<16x48xf32>
    %x2 = tensor.collapse_shape %x [[0, 1], [2]] -> tensor<8x16xf32>
    %p  = linalg.generic ins(%x2, %wt ...) outs(%bias_rows) -> tensor<8x48xf32>
    %q  = linalg.generic ins(%p3 ...) -> tensor<1x2x8x8xf32>  // columns [0, 16)
    ... %k, %v likewise from columns [16, 32) and [32, 48)
    %o  = attn.sdpa %q, %k, %v : ... -> tensor<1x2x8x8xf32>
    %m  = linalg.generic ins(%o ...) -> tensor<1x8x2x8xf32>   // merge heads
    %y  = linalg.generic ins(%m2, %wot ...) -> tensor<8x16xf32>  // + bias
    ```

    An f16/bf16 `attn.mha` is widened to f32 first (its projections and
    attention computed in f32, the result rounded back). With
    `widen-attention` (the default) every other f16/bf16 attn op is widened
    too, for lowerings that take only f32 (the GPU kernels); the CPU
    pipeline turns it off, because `attn-tile` chooses how a bf16
    `attn.sdpa` computes (bf16 dot products on AVX512-BF16 targets).
  }];
  let options = [
    Option<"widenAttention", "widen-attention", "bool", /*default=*/"true",
           "Also widen f16/bf16 attn.sdpa, attn.gat and attn.gatv2 ops to "
           "f32 (attn.mha is always widened before it is decomposed)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def AttnSdpaToGpu : Pass<"attn-sdpa-to-gpu"> {
  let summary = "Lower attn.sdpa to a gpu.launch: one subgroup per query row, K/V tiles staged in workgroup memory, online softmax";
  let description = [{
    Rewrites each `attn.sdpa` with static shapes into a `gpu.launch` over
    buffers (`bufferization.to_buffer` of the operands, a fresh buffer for
    the result, `bufferization.to_tensor` of it), so that the rest of the
    function stays on tensors and is bufferized with it.

    Mapping: workgroups are (query tile, head, batch) — grid
    `ceil(Lq / rows) x H x B`; a workgroup is `subgroup-size x rows`
    threads: thread (x, y) is lane x of the subgroup that owns query row
    `tile * rows + y`. Each lane holds the query elements `d = x + c *
    subgroup-size` (registers, `ceil(E / subgroup-size)` of them) and the
    same slice of the output accumulator. Per key tile of `block-k` keys the
    workgroup stages K and V in workgroup memory (two barriers); per key the
    lanes' partial dot products are summed by `gpu.subgroup_reduce add`, and
    the online-softmax step (running max, rescaled sum and accumulator) is
    taken by every lane on the subgroup-uniform score. The key tiles visited
    are the key span of the workgroup's rows from the mask kind's definition
    (`dialect/MaskKinds.h`), less the tiles a `mask_mod` region leaves
    empty for all of them (its tile classes, `MaskModTiles`: the interval
    analysis the CPU tiling uses; the skip is the workgroup's, so the
    barriers stay in uniform control flow); masks, padding, alignment, bias, relative bias,
    Shaw keys, ALiBi and the `score_mod` / `mask_mod` regions come from the
    one score emitter every lowering shares (`SdpaScoreEmitter`), tensors
    it reads are read from their buffers. f16 operands are read as f32 and
    the result rounded once; rows without an allowed key give 0 (lse
    `-inf`).

    `subgroup-size` must be the device's subgroup size (8 on lavapipe, 32 on
    NVIDIA); it is the workgroup's x size, which the Vulkan runtime checks
    at launch. A graph mask is tested per key by the subgroup scanning the
    row's CSR entries (a uniform number of steps; entries clamped into the
    operands). Dynamic shapes, and regions reading a scalar defined outside
    them (it would become a scalar kernel argument), are refused with one
    error naming the op.

    With `tensor-cores` (set by `attn-gpu-pipeline{target=cuda}` for sm_80
    and newer), f16 and bf16 attention whose head dims E and Ev are
    multiples of 16 (at most 256), without Shaw keys or a graph mask, gets a
    FlashAttention-2 style kernel instead: workgroups of 4 warps (32 x 4
    threads), each warp owning 16 query rows (64 a workgroup). The warp
    keeps its Q rows as `mma.sync` A fragments in registers (E <= 128;
    wider rows are read again per key tile); per key tile
    (64 keys, 32 where E + Ev > 256) K and V are copied into shared memory
    with `nvgpu.device_async_copy` (cp.async, rows past Lk zero-filled),
    the V copy in flight while S = Q K^T runs and the next K copy while
    P V runs; `nvgpu.ldmatrix` reads the B fragments (K as it is, V
    transposed) from rows padded by 8 elements (no bank conflicts);
    `mma.sync.m16n8k16` computes S and P V with f32 accumulators (bf16
    as `nvvm.mma.sync`: MLIR 22's nvgpu lowering deduces no bf16). Each
    thread holds two rows of S; the row max and sum take two `gpu.shuffle
    xor` steps over the four threads of a row. Scores come from the same
    emitter; tiles the mask kind (and a mask_mod's tile classes, the
    padding, Lk) leave full skip the element mask, tiles a mask_mod leaves
    empty skip the compute. P is rounded to the input type for the
    second product and the row sum l sums the rounded P, as on the CPU.
  }];
  let options = [
    Option<"subgroupSize", "subgroup-size", "int64_t", /*default=*/"32",
           "Lanes per query row: the device's subgroup size">,
    Option<"rows", "rows", "int64_t", /*default=*/"4",
           "Query rows (subgroups) per workgroup">,
    Option<"blockK", "block-k", "int64_t", /*default=*/"0",
           "Keys per staged K/V tile (0: as many as fit shared-memory, at "
           "most 64)">,
    Option<"sharedMemory", "shared-memory", "int64_t", /*default=*/"16384",
           "Workgroup memory budget in bytes for the staged K/V tiles">,
    Option<"workgroupAttributions", "workgroup-attributions", "bool",
           /*default=*/"false",
           "Workgroup buffers as gpu.launch workgroup attributions (NVVM) "
           "instead of memref.alloc in memory space 3 (SPIR-V)">,
    Option<"leaveUnsupported", "leave-unsupported", "bool",
           /*default=*/"false",
           "Leave an op the kernel does not take as it is (bf16, f16 with "
           "score modifications, dynamic shapes) instead of an error: for "
           "a first run on f16 storage, before the widening passes">,
    Option<"tensorCores", "tensor-cores", "bool", /*default=*/"false",
           "NVIDIA tensor cores (sm_80 and newer) for f16/bf16 attention: "
           "the mma.sync kernel described above, for the ops it takes">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::gpu::GPUDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::NVVM::NVVMDialect", "::mlir::nvgpu::NVGPUDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def AttnGatToGpu : Pass<"attn-gat-to-gpu"> {
  let summary = "Lower attn.gat to a gpu.launch: one subgroup per destination node, online softmax over its in-edges";
  let description = [{
    The projection `z = x W^T` stays a contraction (on the host); the
    kernel takes one subgroup per destination node `i` (grid
    `ceil(N / rows)`, workgroups of `subgroup-size x rows` threads), the
    lanes holding the node's channels `c = lane, lane + S, ...`. Per head,
    the destination score `att_dst . z_i` and each in-edge's source score
    `att_src . z_j` are subgroup sums; the edges of `i` (CSR) are visited
    once, with an online softmax over LeakyReLU of their scores and the
    weighted rows `z_j` accumulated in registers. The state starts with
    the self loop (`add_self_loops`: existing self loops are dropped);
    duplicate edges count separately, as in PyG; a node without in-edges
    gets 0 plus the bias. Heads are written concatenated or averaged
    (`combine`). f32 (f16/bf16 are widened before, by
    `attn-decompose-mha`'s patterns); static shapes.
  }];
  let options = [
    Option<"subgroupSize", "subgroup-size", "int64_t", /*default=*/"32",
           "Lanes per destination node: the device's subgroup size">,
    Option<"rows", "rows", "int64_t", /*default=*/"4",
           "Destination nodes (subgroups) per workgroup">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::gpu::GPUDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect"
  ];
}

def AttnPrepareSpirvKernels : Pass<"attn-prepare-spirv-kernels", "::mlir::ModuleOp"> {
  let summary = "Prepare GPU kernels for convert-gpu-to-spirv: workgroup sizes, sign extensions, uniform reductions, zero-trip loops";
  let description = [{
    On every `gpu.func` kernel:

    - `convert-gpu-to-spirv` needs `spirv.entry_point_abi<workgroup_size =
      [x, y, z]>` (the SPIR-V `LocalSize`); `gpu-kernel-outlining` records
      the launch's constant block size as `known_block_size`. It is copied
      over; a kernel without a known block size is one error naming it.
    - Sign extensions to 64 bits (`arith.extsi`, and `arith.index_cast` of
      a narrower integer to `index`, 64-bit in SPIR-V) become a zero
      extension and `(x ^ 2^(n-1)) - 2^(n-1)`, which is the same value:
      Mesa's lavapipe (22.3) miscompiles `OpSConvert` feeding a comparison
      (an i32 `kv_lengths` compared with a key index was always greater).
    - `gpu.subgroup_reduce ... uniform` (canonicalization marks reductions
      outside divergent control flow so) lowers to the `Groups` capability,
      which Vulkan shaders lack; the flag is dropped (the non-uniform
      reduction is the same when every lane takes part).
    - Every `scf.for` with results goes inside `scf.if (lb < ub)`, its init
      values otherwise: `convert-scf-to-spirv` keeps loop results in
      function variables only the body stores, so a loop that runs zero
      times returned undefined values (a GAT node without in-edges).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::spirv::SPIRVDialect"];
}

def AttnSubgroupReduceToShuffles : Pass<"attn-subgroup-reduce-to-shuffles"> {
  let summary = "Lower gpu.subgroup_reduce to butterfly gpu.shuffle xor steps";
  let description = [{
    `convert-gpu-to-nvvm` lowers only uniform integer subgroup reductions;
    the kernels' f32 sums and maxima become `log2(subgroup-size)` steps of
    `gpu.shuffle xor` (NVVM's `shfl.sync.bfly`), with upstream's patterns.
    `subgroup-size` is the target's (32 on NVIDIA).
  }];
  let options = [
    Option<"subgroupSize", "subgroup-size", "int64_t", /*default=*/"32",
           "Lanes of the target's subgroup (warp)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::vector::VectorDialect"];
}

def AttnAlignWorkgroupBuffers : Pass<"attn-align-workgroup-buffers"> {
  let summary = "Align the workgroup attributions of GPU kernels (llvm.align)";
  let description = [{
    `convert-gpu-to-nvvm` makes each workgroup attribution of a `gpu.func`
    a `.shared` global aligned to its element type unless the attribution
    carries `llvm.align`; `ldmatrix` and 16-byte `cp.async` need 16-byte
    aligned shared-memory addresses (the tensor-core kernel's staged f16 /
    bf16 tiles were `.align 2`). This pass sets `llvm.align = alignment` on
    every workgroup attribution of every kernel that has none or a smaller
    one (a larger alignment already there stays).
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"16",
           "Bytes (a power of two)">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def AttnNestSpirvModules : Pass<"attn-nest-spirv-modules", "::mlir::ModuleOp"> {
  let summary = "Move each spirv.module into the gpu.module it was converted from";
  let description = [{
    `convert-gpu-to-spirv` puts the `spirv.module @__spv__NAME` of
    `gpu.module @NAME` beside it; `gpu-module-to-binary` serializes a
    SPIR-V target's `spirv.module` only from inside the `gpu.module`. This
    pass moves it there (upstream does the same with a test-only pass).
  }];
}

def AttnTile : Pass<"attn-tile"> {
  let summary = "FlashAttention-style tiling of attn.sdpa with online softmax";
  let description = [{
    Rewrites every `attn.sdpa` into fused, tiled attention on tensors:

    ```
    K^T = transpose(K) as B x Hkv x ceil(Lk / block-k) x E x block-k
    scf.forall (b, h, qt) in (B, H, ceil(Lq / block-q)) {   // parallel
      Q_t = Q[b, h, qt*bq : bq]
      m, l, acc = -inf, 0, 0
      scf.for kt in [kv_begin(qt), kv_end(qt, b)) {          // sequential
        S = Q_t K^T[b, h / group, kt], score modifications (scale, bias,
            relative, ALiBi)
        if (tile is on a mask boundary) S = select(allowed, S, -inf)
        m, l, acc = online_softmax_step(S, V_t, m, l, acc)
      }
      O[b, h, qt] = acc / l;  lse[b, h, qt] = m + log l       // 0 / -inf if l = 0
    }
    ```

    Mask-aware iteration:
    - causal, local, causal_local: `kv_begin`/`kv_end` are computed per query
      tile from the window, so fully masked key tiles are never visited; the
      element mask is applied only on tiles that straddle a mask boundary
      (full tiles run mask-free code).
    - padding: `kv_end` stops at `ceil(kv_lengths[b] / block-k)`.
    - graph, dense graphs (more than `graph-edge-density` of the `Lq x Lk`
      pairs in the CSR): a block mask (which (query tile, key tile) pairs
      hold any edge) is built once per call from the CSR; empty tiles are
      skipped, the others are element-masked from the CSR (densified once).
    - graph, sparse graphs: no tiles at all. Per (batch, head, query row),
      one pass over the row's CSR entries, `edge-block` at a time: scores are
      dot products of the query row with the gathered key rows (score
      modifications and the padding mask applied per entry), then one
      online-softmax step with the running max, sum and the `Ev`-wide output
      row in registers. Work is proportional to the edges, whatever their
      layout. A pre-pass per call, parallel over chunks of rows, compacts
      each row in place to the first occurrence of each key (duplicates must
      not enter the softmax twice: the mask is a set), dropping out-of-range
      keys.
    - relative bias, Shaw keys, ALiBi and the additive bias are applied inside
      the tile loop; the Shaw term is one `block-q x (2R+1)` contraction per
      query tile. No `Lq x Lk` tensor is materialised (except the densified
      graph mask).

    Q is scaled once per query tile (not every score tile). Where nothing
    modifies the f32 scores (no bias, relative bias, Shaw keys, ALiBi or
    score_mod; masks only write -inf), that scale carries log2(e) too, as
    FlashAttention's `softmax_scale_log2`: S is then in base-2 units, every
    exp of the step is 2^x (one multiply per score less), m is in the same
    units, and `lse = m ln(2) + log l`.

    K is transposed once per call, tile-major: each key tile's `E x block-k`
    block is contiguous, so `Q K^T` streams whole key rows (transposing per
    key tile repeated the work for every query tile; an `E x Lk` layout put
    the block's rows `Lk` floats apart, on the same few L1 sets).

    f16 and bf16 operands are extended to f32 once per call and the results
    rounded back: scores, the online softmax and the accumulators are f32.
    On a target with bf16 dot products (AVX512-BF16: Zen 4 and later, Cooper
    Lake, Sapphire Rapids and later; `bf16-dot-product`, on by default) bf16
    attention keeps Q, K and V in bf16 instead: K^T is laid out once per call
    with each key's elements 2t, 2t + 1 side by side (`B x Hkv x key tile x
    E/2 x block-k x 2`), V with keys 2t, 2t + 1 side by side (`B x Hkv x
    Lk/2 x Ev x 2`), and `Q K^T` and `P V` are contractions over (pair,
    element) with f32 accumulation, which `attn-lower-vectors` turns into
    `vdpbf16ps` (x86vector.avx512.dot). As FlashAttention does, P is rounded
    to bf16 before `P V`; the scores, the softmax, its row sums and the
    accumulators stay f32. Q is prescaled in bf16 only by a power-of-two
    scale (exact); another scale multiplies the f32 scores. Shaw keys, an odd
    head dim and the edge-list lowering compute in f32. So does bf16
    attention on a target whose dot products are slower than its f32 FMAs
    (`CpuTarget::hasSlowBf16DotProduct`: Intel's Sapphire, Emerald and
    Granite Rapids, and other CPUs with AMX) unless its tiles are AMX tile
    products there: AMX, with
    `block-q` (as clamped to Lq) and the value dim multiples of 16, and
    `block-k` and the head dim multiples of 32.

    Lengths that the blocks do not divide are padded with zeros up to a
    multiple of the block (Q rows and K/V rows); padded keys are masked on the
    last key tile and padded query rows are sliced off, so every tile has a
    static shape. Block sizes larger than the sequence are clamped to it.

    Block sizes come from the function's CPU target (`attn-set-target`; the
    host when none is recorded) unless given: `block-k` = 64 (a key tile of
    `E x 64` floats and the `block-q x 64` score tile stay in L1/L2 at
    E <= 128), `block-q` the multiple of `attn-vectorize`'s register-tile
    rows near 64 — 64 on AVX-512 and NEON (8-row tiles), 60 on AVX2 (6-row
    tiles) — when it divides Lq, else 64 or 32 when they divide Lq (then
    AVX2 runs 4-row tiles: padding Q and copying the output out of a padded
    buffer cost more), else the multiple of the rows. For f32 attention
    where every query tile visits every key (a dense mask kind and no
    `mask_mod`) and Lk >= 1024, `block-q` is 256 when 256 divides
    Lq >= 1024 and B x H x Lq / 256 >= 16 tiles remain for the threads:
    each query tile streams all of K^T and V through the caches, and four
    times the rows per key tile fetched took 9-15 % off dense L = 8192,
    E = 128 on Zen 4 (within noise at L = 1024 and 4096). bf16 attention
    on AMX tiles takes `block-q` = 32 where a 64-row step's data (Q, K and
    V tiles, f32 scores and accumulators, bf16 P) overflows the 48 KB L1 of
    AMX cores and a 32-row one's fits (E = Ev = 64 with 64 keys: 40 KB
    against 64): they pass through memory between the tile products, and
    in L1 the step took a fifth less time on a Sapphire Rapids-class Xeon.

    Short key sequences (`short-sequences`, on by default, and no block size
    given): f32 attention whose Lk keys and Ev-wide output row each fit in
    four vectors of the target's f32 lanes (Lk, Ev <= 64 on AVX-512, <= 32
    on AVX2, <= 16 on NEON), E <= 128, with plain scaled scores (no bias,
    relative or graph terms, no regions), a dense, causal, local or
    causal_local mask and any padding (`kv_lengths`), takes the
    register-row lowering instead of tiles, the case of a ViT's heads
    (17 keys of 16 dims in the Fashion-MNIST model):

    ```
    scf.forall (b, h, rows) in (B, H, units of Lq) {        // parallel
      for each block of `lanes` query rows (a row in each lane) {
        Q^T = transpose(Q[b, h, block])       // into a scratch tile
        for each register tile of keys {      // a loop over e
          S[j] += Q^T[e] * broadcast(K[b, h / group, j, e])
        }
        S[j] = select(allowed, scale * S[j], -inf)  // each lane's keys
        m = max_j S[j];  P[j] = exp(S[j] - m);  l = sum_j P[j]
        for each register tile of value dims { // a loop over j
          O^T[c] += P[j] * broadcast(V[b, h / group, j, c])
        }
        O[b, h, block] = transpose(O^T) / l
      }
      K^T = transpose(K[b, h / group])          // into a scratch tile
      for each remaining query row i (several side by side) {
        S = sum_e broadcast(Q[b, h, i, e]) * K^T[e, :]  // a loop over e
        S = select(allowed, scale * S, -inf)  // the row's key interval
        m = max(S);  P = exp(S - m);  l = sum(P)
        O[b, h, i] = sum_j broadcast(P[j]) * V[b, h / group, j, :] / l
      }                                         // a loop over j
    }
    ```

    In a block of rows, a key's scores are one vector over the rows, so
    max and sum over the keys are elementwise (no shuffles). Its two
    products are register tiles as a GEMM's: at most three quarters of the
    registers in accumulators (the keys or value dims of a tile), a row of
    Q^T or P per step, one broadcast per FMA, as a loop, so that only the
    tile's values are live; with the steps unrolled and Q^T in registers,
    LLVM spilled and reloaded values all over the block (the ViT's
    attention, B = 100, H = 4, L = 17, E = 16, one thread on Zen 3: 0.26 ms
    unrolled, 0.18 ms as loops, 0.69 ms tiled). The rows that fill no
    block run row by row: K^T of a (batch, head) is transposed in
    registers from blocks of K into a scratch tile, rows run several at a
    time (their accumulators within half the registers), a row's scores
    are whole vectors of keys plus the rest in the narrowest power-of-two
    vector (the 17th key is one dot product), and both products are loops
    again, two steps per iteration into two sets of accumulators where
    there are few (a row's chains of FMAs halved): one decoding step (Lq =
    1, Lk = 32, E = 32, B = 4, H = 12, one thread on Zen 3) took 0.021 ms
    with K^T in registers, 0.013 ms this way, 0.016 ms tiled. No
    online-softmax state is kept. The tiled path would do three things
    worse: make a 17-key tile 17-lane vectors, which LLVM splits lane by
    lane; rescale an accumulator that a single key tile does not need; and
    store each step's tile in memory.
  }];
  let options = [
    Option<"blockQ", "block-q", "int64_t", /*default=*/"0",
           "Query rows per tile (the parallel dimension; 0: from the target)">,
    Option<"blockK", "block-k", "int64_t", /*default=*/"0",
           "Key rows per tile (the online-softmax step; 0: from the target)">,
    Option<"graphEdgeDensity", "graph-edge-density", "double",
           /*default=*/"0.2",
           "Graph masks whose CSR holds at most this fraction of the Lq x Lk "
           "pairs take the edge-list lowering, denser ones block-mask tiles "
           "(0: always tiles, 1: always edges)">,
    Option<"edgeBlock", "edge-block", "int64_t", /*default=*/"0",
           "CSR entries per online-softmax step of the edge-list lowering "
           "(0: the target's f32 lanes)">,
    Option<"bf16DotProduct", "bf16-dot-product", "bool", /*default=*/"true",
           "bf16 attention as bf16 pair dot products with f32 accumulation "
           "where the target has them (AVX512-BF16); false: computed in f32 "
           "like f16">,
    Option<"shortSequences", "short-sequences", "bool", /*default=*/"true",
           "Attention whose keys (and output row) fit in four vectors of the "
           "target takes the register-row lowering when no block size is "
           "given; false: always tiles">,
    Option<"speculativeSoftmax", "speculative-softmax", "bool",
           /*default=*/"false",
           "f32 key tiles whose scores need no mask and no modification "
           "(dense attention's; a tile that may be masked takes the exact "
           "step) take P = exp(S - m) against the earlier tiles' "
           "row max, which attn-vectorize computes in Q K^T's register "
           "tiles, and FlashAttention-4's conditional rescale where a row's "
           "max climbs (buildSpeculativeSoftmaxStep); an experiment, not "
           "faster on AVX2 (docs/Rationale.md)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect", "::mlir::vector::VectorDialect"
  ];
}

def AttnRuntimeChecks : Pass<"attn-runtime-checks", "::mlir::ModuleOp"> {
  let summary = "Bounds checks at run time for the code around attn ops";
  let description = [{
    Makes the accesses of hand-written code whose indices are computed at
    run time (a loop running past a dimension, an index read from an input)
    end in one error instead of a read or write outside a buffer. attn-run
    runs it first, before its pipeline (`--runtime-checks`, on by default).

    - Every op outside the attn ops and GPU code that implements MLIR's
      `RuntimeVerifiableOpInterface` gets its checks (`memref.load` /
      `store`, `memref.subview`, `memref.cast`, `tensor.extract` / `insert`,
      `tensor.extract_slice`, the shapes of linalg ops, ...), with a message
      of this pass's form.
    - `affine.load` / `store` (their maps expanded) and `vector.load` /
      `store` are checked here: every index in `[0, size)`, and the whole
      vector inside the trailing dimensions.
    - Integer division and remainder (`arith.divsi`, `divui`, `remsi`,
      `remui`, `ceildivsi`, `ceildivui`, `floordivsi`; scalars, `index` and
      vectors, every lane) are checked here: a zero divisor, and for the
      signed ones the minimum integer divided by -1, would trap (SIGFPE on
      x86). A constant divisor with no zero lane (and for the signed ones
      no -1 lane) needs no check.
    - Every `cf.assert` there (the checks above and the user's own) becomes
      `scf.if` on the negated condition around a call of
      `attn_check_failed(const char *message)`, which the JIT's runtime
      (lib/Runtime/Jit.cpp) provides: it prints the message and ends the
      process with exit status 1 (MLIR's own lowering of `cf.assert`
      aborts). The module may declare that function but not define it
      (an error); code compiled ahead of time with this pass must link a
      definition. Checks that hold for any input (constant indices in
      static shapes) are dropped.

    Functions of nested modules and the body of
    `memref.generic_atomic_rmw` (which allows no side effects) are not
    instrumented. Regions of attn ops are not touched either: the lowerings clamp a region's
    data-dependent index into the tensor it reads, and the verifier requires
    tensors indexed by `b`, `h`, `q_idx` or `kv_idx` to cover them.

    ```mlir
    // attn-opt --attn-runtime-checks
    scf.for %i = %c0 to %c5 step %c1 {
      // FILE:4:12: error: memref.load: out-of-bounds access (a run-time check)
      %ok = ... arith.cmpi sge %i, %c0 ... arith.cmpi slt %i, %c4 ...
      scf.if %failed {
        %msg = llvm.mlir.addressof @attn_check_message : !llvm.ptr
        func.call @attn_check_failed(%msg) : (!llvm.ptr) -> ()
      }
      %x = memref.load %m[%i] : memref<4xf32>
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::affine::AffineDialect", "::mlir::arith::ArithDialect",
    "::mlir::cf::ControlFlowDialect", "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def AttnSetTarget : Pass<"attn-set-target", "::mlir::ModuleOp"> {
  let summary = "Choose the CPU target once and record it in the IR";
  let description = [{
    Resolves a CPU target (the host by default, or a triple, CPU name and
    feature list as llc's `-mtriple`, `-mcpu` and `-mattr`) and records it:
    `llvm.target_triple` on the module (unless it has one),
    `target_cpu` and `target_features` (the features that differ from the
    CPU name's own set) on every `func.func` that does not carry a
    `target_cpu` yet: a target chosen in the IR or by a tool
    (`attn-run --target-cpu`, `attn-compile --target-cpu`) wins. The attributes reach
    the LLVM functions, so the JIT, `--emit=asm|obj` and the C header agree,
    and every CPU lowering reads its vector width and register count from
    them (`attn-vectorize`'s register tiles and vector widths, `attn-tile`'s
    block sizes, the transpose blocks of `attn-lower-vectors`): AVX-512 gives
    16 f32 lanes and 32 registers, AVX2 8 and 16, NEON 4 and 32. A pass that
    finds no target uses the host.

    ```mlir
    // attn-opt --attn-set-target="cpu=x86-64-v3"
    module attributes {llvm.target_triple = "x86_64-unknown-linux-gnu"} {
      func.func @f(...) attributes {target_cpu = "x86-64-v3"} { ... }
    }
    ```

    `cpu=host` on a machine whose CPU name implies features it lacks (a VM
    with AVX-512 masked off) records the difference, e.g.
    `#llvm.target_features<["-avx512f", ...]>`. Unknown triples, CPU names
    and features are errors.
  }];
  let options = [
    Option<"triple", "triple", "std::string", /*default=*/"\"\"",
           "LLVM target triple (default: the host's)">,
    Option<"cpu", "cpu", "std::string", /*default=*/"\"host\"",
           "LLVM CPU name (host: this machine's name and features)">,
    Option<"features", "features", "std::string", /*default=*/"\"\"",
           "Comma-separated +feature / -feature list added to the CPU's">
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def AttnVectorize : Pass<"attn-vectorize", "::mlir::func::FuncOp"> {
  let summary = "Register-tile and vectorize the linalg ops of tiled attention";
  let description = [{
    Runs on linalg on tensors (after `attn-tile`). First, three rewrites
    that remove whole passes over memory around attention and linear layers:

    - a permutation copy (a generic that only copies, its input indexed by a
      permutation of the loops: `attn-decompose-mha`'s head split
      B x L x H x hd -> B x H x L x hd) read only by `tensor.extract` and
      `vector.transfer_read` (attn-tile's register rows) is read through:
      the reads index the copy's input at the permuted indices, a head's
      rows at a stride;
    - a permutation copy of an `scf.forall`'s result whose pieces are all
      `tensor.parallel_insert_slice`s into an empty tensor (the head merge
      after the per-head loop) is written by the loop: each piece goes to
      its permuted place;
    - an elementwise sum `x + C` of a contraction's result `C` (directly or
      through an `expand_shape`) that nothing else reads, such as a residual
      connection after a linear layer, becomes the contraction's
      accumulator producer `P + x` (with `P` the bias broadcast or fill):
      the register tiles start from bias + x (the sum is reassociated).

    A generic that transposes the two innermost dims (a weight's transpose)
    is rewritten as `linalg.transpose`. Then every statically shaped
    `linalg.generic`, `linalg.fill` and `linalg.transpose` is tiled with
    `scf.for` loops into register-sized pieces and vectorized:

    - contractions (one reduction, multiply-add body), e.g. `Q K^T` and `P V`:
      `rows x cols x 1` tiles (`register-rows`, `register-cols`; the
      reduction is stepped one element at a time) become `vector.contract`s
      that lower to outer-product FMAs, with the accumulator kept in
      registers across the reduction loop by `attn-lower-vectors`;
    - elementwise ops: one row at a time, the last dimension up to
      `vector-width` elements (from the target: an eighth of the register
      file, so that a polynomial exp's temporaries stay in registers); row
      reductions reduce a whole row, and a plain one (one max or add of f32,
      rows and columns whole vectors of lanes, at most 16 vectors a row: the
      online softmax's row max) a block of one vector's lanes of rows, whose
      results `attn-lower-vectors` gives as one vector; a reduction of at most 16 vectors over
      the dimension before a parallel last one (the online softmax's row
      sums in lanes) is taken whole, as vector adds, and so is one whose
      lanes hold pairs (bf16 row sums: units x 16 x 2 over the units and
      the pair, which `attn-lower-vectors` makes dot products with ones);
    - transposes of the two innermost dimensions (`K^T`): blocks of one
      register's lanes squared (16 x 16 on AVX-512, 8 x 8 on AVX2); so are
      transposes of the two before a last dimension of two 16-bit values
      (bf16 `K^T` in pairs), each pair whole;
    - the producer of a contraction's accumulator is fused into the
      contraction's tiles (tile-and-fuse along the parallel dimensions): a
      `linalg.fill` (a linear layer, GAT's projection, the scores `Q K^T`;
      a fill that other ops read too stays for them), so that each register
      tile starts from the fill value instead of reading back an output that
      a separate pass zeroed, and an elementwise op that only the
      contraction reads (the online softmax's rescale `a * acc` before
      `acc += P V`), so that each tile scales its accumulator in registers
      instead of a separate pass over the whole accumulator;
    - an elementwise op marked `attn.register_tile_epilogue` that reads a
      contraction's product (`attn-tile`'s `speculative-softmax`: P =
      exp(S - m)) is computed in the contraction's register tiles, after
      their reduction and a row of the tile at a time, so that it can run
      beside the next tile's FMAs; the product is still stored for its
      other readers (the row max);
    - a contraction whose rows have no divisor within one of the register
      tile's rows (64 query rows and AVX2's 6-row tiles) is split into the
      rows of whole register tiles and the rest (60 + 4 rows), each with its
      own slice of the accumulator's producer: 4-row tiles everywhere would
      leave 8 accumulators, which is no latency slack for two FMA units;
    - tile sizes divide the dimensions, so every vector is static: the
      largest divisor not above the target that is a whole number of
      registers, else a power of two, else any divisor; an op that does not
      vectorize (e.g. an unsupported gather) stays scalar;
    - large ops outside any `scf.forall` (at least 2^18 iterations: a model's
      linear layers, GAT's projection, attn-tile's `K^T`, fills of big
      buffers) are first split along their outermost parallel loop of at
      least `parallel-chunks` iterations (else their first loop) into
      `parallel-chunks` static pieces of an `scf.forall`, which the pipeline
      runs on its threads (or as a plain loop with `threads=1`); two such
      foralls of one iteration space in a block, the later reading nothing
      the earlier computes (bf16 attention's `K^T` and `V` pair layouts),
      become one, so one parallel region (one wake-up of the threads)
      serves both.

    The register tile comes from the function's CPU target (`attn-set-target`;
    the host when none is recorded) unless given: two vector registers wide
    (`cols = 2 x lanes`) and as many rows as leave registers for the two
    right-hand-side vectors and one broadcast (`2 rows + 3 <= registers`,
    at most 8): AVX-512 8 x 32 (16 zmm accumulators), AVX2 6 x 16 (12 ymm,
    BLIS's Haswell kernel shape), NEON 8 x 8. A tile sized for 32 registers
    spills on a 16-register ISA. On AVX-512 an f32 contraction whose
    columns are a multiple of 64 takes a tile four registers wide, 6 x 64
    (`4 rows + 5 <= registers`: 10 loads per 24 FMAs where 8 x 32 has 10
    per 16), when its rows fit those tiles (at most 6, a divisor of 5 or 6,
    or at least 24); the rows that a contraction splits off (below) tile as
    the whole does. Either option given turns the 6 x 64 tile off (the
    other takes the two-register tile's value).

    Example (a 64 x 64 x 64 `Q K^T` tile for AVX-512): the rows split 60 +
    4; three `scf.for` loops (rows step 6, columns step 64, reduction step
    1) around a `vector.contract` of `vector<6x1xf32>` and
    `vector<1x64xf32>` into `vector<6x64xf32>`, then the same of 4 rows.
  }];
  let options = [
    Option<"registerRows", "register-rows", "int64_t", /*default=*/"0",
           "Rows of a contraction's register tile (0: from the target; "
           "given, it or register-cols turns AVX-512's 6 x 64 tile off)">,
    Option<"registerCols", "register-cols", "int64_t", /*default=*/"0",
           "Columns of a contraction's register tile (0: from the target; "
           "given, it or register-rows turns AVX-512's 6 x 64 tile off)">,
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"0",
           "Elements per vector of elementwise ops (0: from the target, "
           "lanes x registers / 8: 64 on AVX-512, 16 on AVX2 and NEON)">,
    Option<"parallelChunks", "parallel-chunks", "int64_t", /*default=*/"8",
           "Pieces a large op outside parallel loops is split into for the "
           "threads (1: none)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def AttnLowerStridedCopies : Pass<"attn-lower-strided-copies", "::mlir::func::FuncOp"> {
  let summary = "Lower memref.copy of strided buffers to vector loads and stores";
  let description = [{
    After bufferization, `memref.copy` between buffers that are not both
    contiguous (a tile padded into a larger buffer, a head sliced out of a
    projection) becomes a call of the generic `memrefCopy` runtime function,
    which walks the elements and calls `memcpy` once per element: with a
    ViT's 17 keys padded into 32-key tiles it took 20 % of the model's time.
    This pass rewrites such a copy with a static shape, whole-byte elements
    (not i1: a vector of i1 is packed in memory, a memref of i1 is not) and
    an innermost dimension that is contiguous (stride 1) on both sides into
    loops over the outer dimensions around `vector.load` / `vector.store`
    of each row (in chunks of 256 elements and one remainder). Copies LLVM
    turns into `memcpy` (both contiguous), or with a strided innermost
    dimension, stay as they are. It runs in every attn pipeline, after
    buffer deallocation. Like `memref.copy`, it does not define copies
    between overlapping buffers.

    ```mlir
    memref.copy %src, %dst : memref<4x17x16xf32, strided<[3264, 192, 1], offset: ?>>
                        to memref<4x17x16xf32, strided<[512, 16, 1]>>
    // becomes
    scf.for %i = %c0 to %c4 step %c1 {
      scf.for %j = %c0 to %c17 step %c1 {
        %v = vector.load %src[%i, %j, %c0] : ..., vector<16xf32>
        vector.store %v, %dst[%i, %j, %c0] : ..., vector<16xf32>
      }
    }
    ```
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def AttnStackTileBuffers : Pass<"attn-stack-tile-buffers", "::mlir::func::FuncOp"> {
  let summary = "Put the temporaries of each parallel tile (a query tile's scores, probabilities, row statistics) on the stack instead of a malloc and free per tile";
  let description = [{
    After bufferization and deallocation, the body of an `scf.forall` (one
    query tile of attention, one block of GAT nodes) allocates its
    temporaries with `memref.alloc` and frees them at its end:
    `buffer-loop-hoisting` leaves them there, since each thread needs its
    own. For attention with short tiles these are many small allocations
    (bf16 on AMX tiles, L = 1024: nine buffers of 26 KB in all per 32-row
    query tile, 2304 `malloc` / `free` pairs per call).

    This pass runs once the forall is loops (`scf.forall` is an automatic
    allocation scope itself; the loops it becomes are not) and moves such
    buffers to the stack:
    - in the body of an `scf.parallel`, as `memref.alloca`s inside a
      `memref.alloca_scope` that wraps the body: the stack pointer is saved
      and restored around each iteration, so the stack does not grow with
      the trip count, and each OpenMP thread uses its own stack;
    - in the body of an `scf.for` outside any `scf.parallel` (a forall on
      one thread), as `memref.alloca`s at the start of the function: one
      buffer in the function's frame for every iteration.

    It takes an allocation directly in the loop body's block whose type is
    static with the identity layout and int, float or index elements, that
    is freed exactly once, by a `memref.dealloc` in that block, and that
    stays in its iteration: every use of it, or of a memref made of it (a
    view, a cast), is in that block or nested in it, and none is a
    terminator (a yield), a loop or branch operand (an iter_arg) or a call;
    in order, while the bytes taken stay within `max-bytes` (per outermost
    parallel body, and per function for the sequential loops; thread
    stacks are 8 MB for the main thread and 4 MB for libomp's workers).
    Loops under another parallel op (a nested `scf.parallel`, an
    `scf.forall`, an OpenMP region) are left alone, and so is the rest: it
    stays on the heap. `attn-cpu-pipeline` runs it right after
    `scf-forall-to-parallel` / `scf-forall-to-for`.

    ```mlir
    scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
      %s = memref.alloc() {alignment = 64 : i64} : memref<32x64xf32>
      ...
      memref.dealloc %s : memref<32x64xf32>
      scf.reduce
    }
    // becomes
    scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
      memref.alloca_scope {
        %s = memref.alloca() {alignment = 64 : i64} : memref<32x64xf32>
        ...
      }
      scf.reduce
    }
    ```
  }];
  let options = [
    Option<"maxBytes", "max-bytes", "int64_t", /*default=*/"131072",
           "The most bytes of temporaries one parallel loop body (or the sequential loops of one function) takes on the stack">,
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def AttnMergeParallelRegions : Pass<"attn-merge-parallel-regions", "::mlir::func::FuncOp"> {
  let summary = "Merge consecutive OpenMP parallel regions of one team size into one, with a barrier between their bodies";
  let description = [{
    `convert-scf-to-openmp` gives every `scf.parallel` its own
    `omp.parallel`: attention whose K^T (and for bf16 V) is laid out once
    per call starts the thread team twice per call, once for the layouts
    and once for the query tiles. Each start wakes the team's threads
    (from sleep with `OMP_WAIT_POLICY=passive`, or once `KMP_BLOCKTIME`
    has passed) and each end joins them.

    This pass merges an `omp.parallel` with the ones that follow it in the
    same block into one region whose body is theirs in order, separated by
    a barrier: `omp.barrier`, unless the body before already ends in a
    worksharing loop without `nowait`, whose implicit barrier is the same.
    Every thread then finishes the first body's loops before any thread
    starts the second's, as when the team was joined and started again.

    It merges regions of one block, one team size (the same constant
    `num_threads`, or none: the runtime's default team) and no other
    clause (no `if`, `proc_bind`, private, reduction or allocate clause),
    whose bodies are one block ending in `omp.terminator` and cancel
    nothing (`omp.cancel` would skip the merged bodies too), with only ops
    between them that have no regions and
    no memory effect but allocation (constants, views, `memref.alloc`);
    those move before the merged region. Anything else between (a copy, a
    call, a free) keeps the regions apart. `attn-cpu-pipeline` runs it right
    after `convert-scf-to-openmp` when it uses more than one thread.

    ```mlir
    omp.parallel num_threads(%c2 : i32) {
      omp.wsloop { omp.loop_nest (%i) : index = (%c0) to (%c8) step (%c1) { ... } }
      omp.terminator
    }
    %n = llvm.mlir.constant(2 : i32) : i32
    omp.parallel num_threads(%n : i32) {
      omp.wsloop { omp.loop_nest (%j) : index = (%c0) to (%c64) step (%c1) { ... } }
      omp.terminator
    }
    // becomes
    %n = llvm.mlir.constant(2 : i32) : i32
    omp.parallel num_threads(%c2 : i32) {
      omp.wsloop { omp.loop_nest (%i) : index = (%c0) to (%c8) step (%c1) { ... } }
      omp.wsloop { omp.loop_nest (%j) : index = (%c0) to (%c64) step (%c1) { ... } }
      omp.terminator
    }
    ```
  }];
  let dependentDialects = ["::mlir::omp::OpenMPDialect"];
}

def AttnElideResultCopies : Pass<"attn-elide-result-copies", "::mlir::ModuleOp"> {
  let summary = "Compute private functions' results in their out-parameters instead of copying them there";
  let description = [{
    After `buffer-results-to-out-params`, a function whose result was a
    reshaped view of a buffer of its own ends with a `memref.copy` of that
    view into its out-parameter. A model's layer function is one: it
    computes on `[batch * tokens, features]` and returns `[batch, tokens,
    features]` (an `expand_shape` of its last buffer), and the copy moved
    each layer's whole output once more (about 0.6 % of the Fashion-MNIST
    ViT's time; upstream's `hoist-static-allocs` takes only a buffer
    returned as it is). This pass rewrites such a function so that the
    buffer *is* the out-parameter: the `memref.alloc` becomes the inverse
    reshapes of the out-parameter (`collapse_shape` for an `expand_shape`,
    and the other way round) and the copy is erased; every earlier use of
    the buffer, scratch included, then writes into the out-parameter.

    It applies to a copy among the last operations of a private,
    single-block function (only copies into arguments between it and the
    return) whose target argument has no other use and the type of the
    copy's source, and whose source is a chain of `expand_shape` /
    `collapse_shape` (possibly empty) from a static, identity-layout
    `memref.alloc` of the function's body, when every use of the function is
    a `func.call` that passes there a `memref.alloc` made in the call's own
    block, with every other use of it after the call: so the out-parameter
    is a fresh buffer each time, aliasing none of the function's other
    buffers (not one carried around a loop into the next call's inputs).
    Public functions are left alone (their callers may pass an output that
    aliases an input). Each caller's buffer gets the function's buffer's
    alignment if it had less. `attn-cpu-pipeline` and
    `attn-reference-pipeline` run it right after
    `buffer-results-to-out-params`.

    ```mlir
    func.func private @layer(%x: memref<2x3x4xf32>, %out: memref<2x3x4xf32>) {
      %buf = memref.alloc() {alignment = 64 : i64} : memref<6x4xf32>
      ...                                   // computes %buf (6 x 4)
      %view = memref.expand_shape %buf [[0, 1], [2]] output_shape [2, 3, 4]
          : memref<6x4xf32> into memref<2x3x4xf32>
      memref.copy %view, %out : memref<2x3x4xf32> to memref<2x3x4xf32>
      return
    }
    // becomes
    func.func private @layer(%x: memref<2x3x4xf32>, %out: memref<2x3x4xf32>) {
      %buf = memref.collapse_shape %out [[0, 1], [2]]
          : memref<2x3x4xf32> into memref<6x4xf32>
      ...                                   // computes into %out
      return
    }
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def AttnDistinctResults : Pass<"attn-distinct-results", "::mlir::ModuleOp"> {
  let summary = "Give every result of a function its own tensor before bufferization";
  let description = [{
    A function that returns one tensor value more than once (`return %o,
    %o`, or two equal ops that CSE merged) would return one buffer twice
    after bufferization, and MLIR 22's `buffer-results-to-out-params` with
    `hoist-static-allocs` crashes on that. This pass makes each repetition a
    copy of the value (`bufferization.alloc_tensor` with `copy`, which
    always bufferizes to a new buffer: a `linalg.copy` into a `tensor.empty`
    was bufferized in place on the original), so that every result gets a
    buffer of its own and its own out-parameter, as if the function had
    computed it twice. Functions that return each value once
    are left alone. The CPU, reference and GPU pipelines run it right before
    bufferization.

    ```mlir
    func.func @f(%q: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
      %o = ...
      return %o, %o : tensor<4xf32>, tensor<4xf32>
    }
    // becomes
    func.func @f(%q: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
      %o = ...
      %c = bufferization.alloc_tensor() copy(%o) : tensor<4xf32>
      return %o, %c : tensor<4xf32>, tensor<4xf32>
    }
    ```
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def AttnLowerAmx : Pass<"attn-lower-amx", "::mlir::func::FuncOp"> {
  let summary = "Lower bf16 pair contractions to AMX tile products";
  let description = [{
    On a target with AMX-TILE and AMX-BF16 (Sapphire Rapids and later; the
    function's `target_cpu` / `target_features`), rewrites each bufferized
    bf16 pair contraction `C[m, n] += A[m, k, p] * B[k, n, p]` (bf16 A and B,
    f32 C, `p` the element pair; what attn-tile's bf16 mode makes of QK^T and
    PV, with K^T and V packed once per head in this layout, which is AMX's
    for the right-hand tile) whose m, n and k are static multiples of 16
    into AMX tile products: loops over blocks of 2 x 2 (or fewer) 16 x 16 f32
    accumulator tiles, each loaded from C, multiplied by 16 x 32 bf16 tiles
    of A (rows) and B (pairs of 16 columns) for each 16 pairs of the
    reduction (unrolled), and stored back. Four accumulators and their two
    plus two factor tiles fill the eight tile registers. Each factor's pair
    dimension is collapsed into its row (`[m, k, 2]` as `[m, 2k]`); a
    factor whose rows are not contiguous, a C whose rows are not, or any
    other contraction is left as it is (and becomes scalar loops: attn-tile's
    packed operands always qualify). attn-vectorize leaves these
    contractions as linalg ops on such targets, and the CPU pipeline runs
    this pass after bufferization. Elsewhere the pass changes nothing.
    LLVM configures the tiles (`ldtilecfg`) from the shapes.

    ```mlir
    linalg.generic {indexing_maps = [(m, n, k, p) -> (m, k, p),
                                     (m, n, k, p) -> (k, n, p),
                                     (m, n, k, p) -> (m, n)], ...}
        ins(%a, %b : memref<64x32x2xbf16>, memref<32x64x2xbf16>)
        outs(%c : memref<64x64xf32>)
    // becomes, per 32 x 32 block (%i, %j) of C and 16 pairs (%k) of A and B:
    %c00 = amx.tile_load %c[%i, %j] : memref<64x64xf32> into !amx.tile<16x16xf32>
    %a0 = amx.tile_load %a2[%i, %k2] : memref<64x64xbf16> into !amx.tile<16x32xbf16>
    %b0 = amx.tile_load %b2[%k, %j2] : memref<32x128xbf16> into !amx.tile<16x32xbf16>
    %d00 = amx.tile_mulf %a0, %b0, %c00 : !amx.tile<16x32xbf16>, !amx.tile<16x32xbf16>, !amx.tile<16x16xf32>
    amx.tile_store %c[%i, %j], %d00 : memref<64x64xf32>, !amx.tile<16x16xf32>
    ```
  }];
  let dependentDialects = ["::mlir::amx::AMXDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def AttnLowerVectors : Pass<"attn-lower-vectors", "::mlir::func::FuncOp"> {
  let summary = "Prepare vectorized, bufferized attention for LLVM";
  let description = [{
    Runs after bufferization on the output of `attn-vectorize`:
    hoists loop-invariant vector transfers (accumulators stay in registers
    across reduction loops), replaces `math.exp`/`math.log`/`math.erf`/`math.tanh` with
    polynomial approximations (vectorized, no libm calls; -inf inputs give
    exact 0; f32 `erf`, GELU's, is one rational function of the argument
    clamped to [-4, 4], x P(x^2) / Q(x^2) with P of degree 6 and Q of
    degree 4, within 4.5e-7 of erf and clamped into [-1, 1], instead of
    MLIR's per-interval coefficients chosen by selects; on AVX-512 the softmax exp's
    2^n, built from the rounding sum t + 1.5 * 2^23 + 127 and a shift into the exponent,
    becomes `vrndscaleps` and `vscalefps` (with AVX512DQ: the fraction as
    `vreduceps` of u = t + 1/2 rounded down, p 2^floor(u) as `vscalefps`,
    one op less); on AVX512-BF16, f32 -> bf16
    `arith.truncf` of whole 32-value chunks becomes `vcvtne2ps2bf16`, two
    vectors per instruction, where LLVM would round one at a time and join
    the halves, and sums of bf16 pairs into 16 lanes (the bf16 online
    softmax's row sums) become `vdpbf16ps` with a vector of ones), and
    lowers multi-reductions (along the
    vector: horizontal reductions, except that a `lanes x cols` block of
    rows reduced into one `lanes` vector is a tree of shuffles and combines
    over the rows' vectors, two shuffles and one combine per pair of
    vectors, instead of one horizontal reduction per row; keeping the
    innermost dim: adds of whole vectors), broadcasts, shape casts,
    transposes (16 x 16 blocks as in-register shuffles on AVX-512; of
    16-bit values on integer lanes: a block of 32-bit pairs, bf16 K^T's, as
    an i32 transpose, two rows interleaved into pairs, bf16 V's, as one
    i16 shuffle, each read and written as whole rows of pairs) and permuted
    transfers to forms `convert-vector-to-llvm` handles. Float sum reductions get
    `fastmath<reassoc>` (a tree instead of one dependent add per lane) and
    `maxnumf` reductions `fastmath<nnan>`: only the online softmax's row max
    uses maxnum, and it merely stabilises `exp` (a NaN score still reaches
    the output through `exp(NaN - m)`).

    On a target with AVX512-BF16, a register tile of bf16 pair dot products
    (attn-tile's bf16 mode: a `vector.contract` of bf16 factors into an f32
    `rows x cols` accumulator over a unit reduction and the element pair)
    becomes `x86vector.avx512.dot` (`vdpbf16ps`): per row, the row's pair
    broadcast as one 32-bit lane, against the columns' pairs as they lie in
    memory, 16 columns per instruction. Contractions of bf16 factors that
    do not take this form (no AVX512-BF16, columns not a multiple of 4) have
    their factors extended to f32 and become FMAs.

    ```mlir
    %r = vector.contract {...} %q, %k, %acc
        : vector<8x1x2xbf16>, vector<1x32x2xbf16> into vector<8x32xf32>
    // becomes, per row r and 16 columns c:
    %d = x86vector.avx512.dot %acc_rc, %q_r_broadcast, %k_c
        : vector<32xbf16> -> vector<16xf32>
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::vector::VectorDialect",
    "::mlir::affine::AffineDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::x86vector::X86VectorDialect",
    "::mlir::LLVM::LLVMDialect"
  ];
}

def AttnExpandBf16 : Pass<"attn-expand-bf16"> {
  let summary = "Expand f32 <-> bf16 conversions into integer arithmetic";
  let description = [{
    `arith.truncf` to bf16 (round to nearest even) and `arith.extf` from bf16
    become bit casts, shifts and adds on i32 (MLIR's bf16 expansion
    patterns). LLVM's x86 backend turns an `fptrunc` to bfloat into a call
    of `__truncsfbf2` (scalar and vector alike, unless the target has
    AVX512-BF16), which is slow and which the JIT cannot always resolve; the
    CPU pipelines run this pass before the LLVM conversion. In functions whose
    target has AVX512-BF16, `arith.truncf` to bf16 is left for LLVM, which
    lowers it to `vcvtneps2bf16` (one instruction per 16 values; it rounds to
    nearest even like the expansion, and treats inputs below 2^-126 as zero;
    attn-lower-vectors has made whole 32-value chunks `vcvtne2ps2bf16`).

    ```mlir
    %b = arith.truncf %x : vector<16xf32> to vector<16xbf16>
    // becomes
    %i = arith.bitcast %x : vector<16xf32> to vector<16xi32>
    ... arith.addi (rounding bias), arith.shrui %.., 16, arith.trunci, arith.bitcast
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def AttnLowerGat : Pass<"attn-lower-gat"> {
  let summary = "Fused, single-pass lowering of attn.gat with online softmax";
  let description = [{
    Lowers `attn.gat` without materialising any per-edge or N x N tensor
    (layers with H*C above 1024, whose node state is no register row, take
    the unfused lowering of `attn-lower-gat-unfused` instead).
    One contraction projects every node to the row `[z | a_src | a_dst]`
    (`x` times `[W^T | W^T A_src | W^T A_dst]`, where `A_src` places
    `att_src[h]` in column `h`): the attention logits travel with `z`, so a
    gathered source row brings both, and `x` is read once. Then one parallel
    loop over destination nodes walks each node's in-edges in blocks of
    `edge-block` edges and keeps, per head, the running max, running sum and
    the unnormalised output (FlashAttention's online softmax) in vector
    registers: `vector<H>`, `vector<H>` and `vector<H*C>` (head-major), so a
    node's state never touches memory and each edge costs one row load, one
    exp and one FMA row. Within a block the max and the sum are trees and the
    weighted rows go into 4 interleaved chains (a single chain through the
    block made the step latency-bound). The rows of the next block's sources
    are prefetched (software prefetch into L2/L3: the gathers are random, so
    without it the loop waits on memory):

    ```
    scf.forall (i) in (N) {
      m, l, acc = -inf, 0, 0                     // vector<H>, vector<H>, vector<H*C>
      (with add_self_loops: m, l, acc = s_ii, 1, z[i], the self loop taken)
      scf.for block in in-edges of i {           // edge-block edges, unrolled
        prefetch rows of the next block's sources
        s_k = LeakyReLU(a_dst[i] + a_src[j_k])   // -inf for invalid slots
        m' = max(m, s_1, ..., s_K);  a = exp(m - m')
        l = a l + sum_k exp(s_k - m')
        acc = a acc + sum_k exp(s_k - m') z[j_k] // per-head factors shuffled to H*C
      }
      out[i] = acc / l                            // 0 for isolated nodes
      (heads concatenated or averaged, bias added, in registers)
    }
    ```

    Memory is O(N H C); duplicate edges count as separate edges; with `add_self_loops`
    existing self loops are skipped and one is added (PyG semantics).
  }];
  let options = [
    Option<"edgeBlock", "edge-block", "int64_t", /*default=*/"16",
           "In-edges processed per online-softmax step">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect", "::mlir::vector::VectorDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def AttnLowerGatUnfused : Pass<"attn-lower-gat-unfused"> {
  let summary = "Unfused GAT lowering: SDDMM, edge softmax, SpMM (the baseline)";
  let description = [{
    Lowers `attn.gat` the way DGL and PyG run it, materialising per-edge
    tensors: the edge list (`E' = nnz` plus one self loop per node with
    `add_self_loops`) with its destinations, the `E' x H` LeakyReLU scores
    (SDDMM), per-node max and sum over each node's edges (edge softmax), the
    `E' x H` attention coefficients, and the aggregation
    `out[i] = sum_e alpha[e] z[src e]` per node (SpMM). O(E H) memory, against
    O(N H C) for `attn-lower-gat`; it is the benchmark baseline and an O(E)
    second path next to the dense reference lowering.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def AttnSimplifyMasks : Pass<"attn-simplify-masks"> {
  let summary = "Rewrite masks that mask nothing to dense";
  let description = [{
    A mask kind that allows every (i, j) of the op is rewritten to
    `mask = dense` and its parameters dropped, so that lowerings do not pay
    for a mask that masks nothing: a `local` window that reaches every key
    from every query row (`window_left >= Lk - 1` and
    `window_right >= Lq - 1`), a `causal` mask of one query row (a decode
    step: the row sits at the last key), and so on for every positional
    kind. The decision is the kind's own definition (dialect/MaskKinds.h),
    asked whether the rectangle of query positions `Lk - Lq .. Lk - 1` and
    keys `0 .. Lk - 1` is fully allowed.

    Before (Lq = Lk = 16):

    ```mlir
    %o = attn.sdpa %q, %k, %v {mask = #attn.mask<local>, window_left = 64 : i64,
                               window_right = 64 : i64} : ...
    ```

    After:

    ```mlir
    %o = attn.sdpa %q, %k, %v : ...
    ```
  }];
}

def AttnFoldScale : Pass<"attn-fold-scale"> {
  let summary = "Fold the softmax scale of attn.sdpa into its query";
  let description = [{
    `scale * (q . k)` equals `(scale * q) . k`: the query (`B x H x Lq x E`
    elements) is multiplied by the scale once, by a `linalg.generic` ahead of
    the op, and the op's `scale` becomes 1, so that a lowering that
    materialises the `Lq x Lk` scores does not scale each of them. The Shaw
    term (`rel_key`) is scaled with `q . k` and folds the same way; biases are
    added after scaling and are untouched. f32 and f64 only: in f16 or bf16
    the product would be rounded to the 16-bit type before the lowering widens
    it, changing the result.

    Before:

    ```mlir
    %o = attn.sdpa %q, %k, %v {scale = 0.125 : f64} : ...
    ```

    After:

    ```mlir
    %c = arith.constant 1.250000e-01 : f32
    %e = tensor.empty() : tensor<1x2x16x8xf32>
    %qs = linalg.generic {...} ins(%q : ...) outs(%e : ...) {
      ^bb0(%x: f32, %out: f32):
        %m = arith.mulf %x, %c : f32
        linalg.yield %m : f32
    } -> tensor<1x2x16x8xf32>
    %o = attn.sdpa %qs, %k, %v {scale = 1.000000e+00 : f64} : ...
    ```

    The worked example of the second part of docs/writing-a-pass.md: a pass
    that creates linalg and arith ops through the project's builders and
    therefore declares their dialects.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def AttnRaiseMods : Pass<"attn-raise-mods"> {
  let summary = "Rewrite regions that are built-in mask kinds, ALiBi or a relative-position bias to the attribute / operand form";
  let description = [{
    A `score_mod` that is `s - slopes[h] * |kv_idx - q_idx|` (the distance
    as `math.absi` or `max(d, 0 - d)`; or `q_idx - kv_idx` under a causal
    kind, where the two are equal) over a captured slope tensor of the op's
    element type is ALiBi: it becomes the `alibi(slopes)` operand. A
    `score_mod` that is `s + table[h, clamp(kv_idx - q_idx, -R, R) + R]`
    over a captured `H x (2R + 1)` table is the `rel_bias(table)` operand
    with `rel_clip = R` (when the op has no other `rel_clip`). A
    `mask_mod` region of an `attn.sdpa` without a mask kind whose result is
    a conjunction of bounds on `kv_idx - q_idx` (comparisons of affine index
    expressions) is a built-in kind written as a region: `kv_idx <= q_idx` is
    `causal`, `q_idx - kv_idx <= L` with it `causal_local` (`window_left =
    L`), two-sided bounds `local`. The region is dropped and the kind set, so
    that the tiled lowering bounds its key-tile loop by the kind's key span
    instead of testing each tile. Applies where the region's row index and
    the kinds' position agree: `#attn.align<top_left>`, or the default
    bottom-right alignment with `Lq == Lk`. Part of `attn-cpu-pipeline`
    (after `attn-decompose-mha`).

    Before:

    ```mlir
    %o = attn.sdpa %q, %k, %v : ... mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %c = arith.cmpi sle, %j, %i : index
      attn.yield %c : i1
    }
    ```

    After:

    ```mlir
    %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>} : ...
    ```
  }];
}

#endif // ATTN_TRANSFORMS_PASSES_TD
