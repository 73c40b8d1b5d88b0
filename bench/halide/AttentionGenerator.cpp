//===- AttentionGenerator.cpp - the Halide peer of attn-bench ------------===//
//
// Attention written in Halide with a hand schedule: per (head, block of 64
// query rows), the 64 x L score block is computed (vectorized over keys with
// K transposed once per head, reduction over E unrolled by 4), masked,
// soft-maxed and multiplied with V (vectorized over E). A register-blocked
// schedule (8 x 32 tiles) is the obvious next step; a first attempt failed
// Halide's bounds checks and was not pursued further. One AOT variant per
// mask family (GeneratorParam `mask`). Layouts follow Halide's x-first
// convention: q/k/v/out are [E, L, H] = our row-major [H, L, E].
//
//===----------------------------------------------------------------------===//

#include "Halide.h"

using namespace Halide;

namespace {

class Attention : public Generator<Attention> {
public:
  GeneratorParam<std::string> mask{"mask", "dense"}; // dense|causal|local|relbias|padding|graph
  GeneratorParam<int> window{"window", 128};
  GeneratorParam<int> relClip{"rel_clip", 64};

  Input<Buffer<float, 3>> q{"q"}, k{"k"}, v{"v"};
  Input<int> kvLength{"kv_length"};
  Input<Buffer<float, 2>> relTable{"rel_table"};  // [2R+1, H]
  Input<Buffer<uint8_t, 2>> graphMask{"graph_mask"}; // [L(j), L(i)]
  Output<Buffer<float, 3>> out{"out"};

  void generate() {
    Var e("e"), i("i"), j("j"), h("h");
    Expr dim = q.dim(0).extent(), len = q.dim(1).extent();
    Expr scale = 1.f / sqrt(cast<float>(dim));
    RDom re(0, dim, "re");

    // K transposed once per head, so that the score loop reads keys
    // contiguously along j.
    Func kT("kT");
    kT(j, e, h) = k(e, j, h);
    Func qk("qk");
    qk(j, i, h) = 0.f;
    qk(j, i, h) += q(re, i, h) * kT(j, re, h);

    Expr s = qk(j, i, h) * scale;
    int w = window, r = relClip;
    Expr allowed = cast<bool>(1);
    std::string m = mask;
    if (m == "causal")
      allowed = j <= i;
    else if (m == "local")
      allowed = j >= i - w && j <= i + w;
    else if (m == "padding")
      allowed = j < kvLength;
    else if (m == "graph")
      allowed = graphMask(j, i) != 0;
    else if (m == "relbias")
      s += relTable(clamp(j - i, -r, r) + r, h);
    Func score("score");
    score(j, i, h) = select(allowed, s, Float(32).min());

    RDom rj(0, len, "rj");
    Func rowMax("row_max"), probs("probs"), rowSum("row_sum"), pv("pv");
    rowMax(i, h) = maximum(score(rj, i, h));
    probs(j, i, h) = select(score(j, i, h) == Float(32).min(), 0.f,
                            exp(score(j, i, h) - rowMax(i, h)));
    rowSum(i, h) = sum(probs(rj, i, h));
    pv(e, i, h) = 0.f;
    pv(e, i, h) += probs(rj, i, h) * v(e, rj, h);
    out(e, i, h) = pv(e, i, h) / rowSum(i, h);

    // Schedule: parallel over (head, 64-row block); the score block lives
    // in a per-block buffer; inner loops vectorized 16-wide.
    Var io("io"), ii("ii"), t("t");
    out.split(i, io, ii, 64, TailStrategy::GuardWithIf)
        .fuse(io, h, t)
        .parallel(t)
        .vectorize(e, 16);
    kT.compute_root().parallel(h).vectorize(j, 16);
    qk.compute_at(out, t).vectorize(j, 16);
    qk.update().reorder(j, re, i).vectorize(j, 16).unroll(re, 4);
    score.compute_at(out, t).vectorize(j, 16);
    rowMax.compute_at(out, t);
    probs.compute_at(out, t).vectorize(j, 16);
    rowSum.compute_at(out, t);
    pv.compute_at(out, t).vectorize(e, 16);
    pv.update().reorder(e, rj, i).vectorize(e, 16);
  }
};

} // namespace

HALIDE_REGISTER_GENERATOR(Attention, attention)
