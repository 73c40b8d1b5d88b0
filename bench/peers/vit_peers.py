#!/usr/bin/env python3
"""Peers of the README's main job: the Fashion-MNIST ViT in other runtimes.

Runs with the peers' virtualenv (scripts/install-peers.sh):

  /opt/attn-peers/bin/python bench/peers/vit_peers.py                 # 1,2 threads x batch 100,500
  /opt/attn-peers/bin/python bench/peers/vit_peers.py --peers onnxruntime,openvino --threads 1
  /opt/attn-peers/bin/python bench/peers/vit_peers.py --batches 100 --threads 1 --limit 1000

The model is models/vit-fashion-mnist.json with the trained weights of
models/vit-fashion-mnist.safetensors in torchvision's VisionTransformer, built
by test/e2e/attn_torch.py's build_vit (as scripts/train-vit-fashion-mnist.py
and the e2e tests do); the images are the 10 000 test images of Debian's
dataset-fashion-mnist (IDX files), scaled to [0, 1] and normalized with the
description's "normalize" mean/std (what attn-compile does). Peers:

  torch-eager    the nn.Module under torch.inference_mode
  torch-compile  torch.compile(module) (Inductor, static shapes), one fresh
                 compilation per (threads, batch): Inductor's CPU kernels take
                 their OpenMP thread count at code generation
  onnxruntime    the module exported to ONNX (torch.onnx.export, TorchScript
                 exporter, dynamic batch axis, into a temporary directory),
                 CPUExecutionProvider, intra_op_num_threads = threads,
                 sequential execution, all graph optimizations
  openvino       the same ONNX file, reshaped to the static batch, compiled on
                 CPU with INFERENCE_NUM_THREADS = threads, one stream, the
                 LATENCY hint and INFERENCE_PRECISION_HINT f32 (OpenVINO
                 would otherwise pick bf16 on CPUs that have it)

and, as attn-compile --workers N runs N single-threaded calls side by side
(data parallel, not intra-op threads), the two runtimes the same way:

  onnxruntime-sessions   `threads` sessions of one intra-op thread each, the
                         batches handed out to them by a thread pool (ONNX
                         Runtime releases the GIL while it runs)
  openvino-streams       the THROUGHPUT hint with NUM_STREAMS = threads and
                         INFERENCE_NUM_THREADS = threads (one thread per
                         stream), the batches submitted to an AsyncInferQueue
                         of `threads` requests

For each peer x threads x batch it classifies all the images once after one
untimed warm-up batch (torch.compile's compilation is in the warm-up; a last
partial batch is padded to the full batch) and prints one JSON line
  {"peer", "threads", "batch", "images_per_s", "accuracy", "note"}
(images/s: images / wall seconds of the timed pass, the best of --repeat
passes), then per (peer, threads) one line with "best": true for the batch
with the most images/s. A configuration that fails prints "error" with
"images_per_s": null and the run goes on (exit code 2 at the end).

Numerics check: every peer's accuracy must equal PyTorch's recorded accuracy
(models/vit-fashion-mnist.torch.json, 0.8808) within 0.001 or, with --limit
N (the first N images only), torch-eager's accuracy on the same N images
(computed untimed first); otherwise the script names the peer and exits 1.
The note also gives the largest |logit| difference from torch-eager.
"""

import argparse
import json
import math
import os
import sys
import tempfile
import time
import warnings

import numpy as np

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "test", "e2e"))

PEERS = ("torch-eager", "torch-compile", "onnxruntime", "openvino",
         "onnxruntime-sessions", "openvino-streams")
TOLERANCE = 0.001


def csv(conv=str):
    return lambda s: [conv(x) for x in s.split(",") if x]


def batches_of(x, batch):
    """x split into [batch, ...] chunks, the last one padded with zeros."""
    out = []
    for i in range(0, len(x), batch):
        chunk = x[i:i + batch]
        if len(chunk) < batch:
            pad = np.zeros((batch - len(chunk),) + chunk.shape[1:], chunk.dtype)
            chunk = np.concatenate([chunk, pad])
        out.append(np.ascontiguousarray(chunk))
    return out


def run_pass(fn, chunks, n):
    """Logits of all n images and the wall seconds of the pass. A peer that
    runs several batches at once gives `fn` a `run_all(chunks)`."""
    start = time.perf_counter()
    run_all = getattr(fn, "run_all", None)
    outs = run_all(chunks) if run_all else [fn(c) for c in chunks]
    seconds = time.perf_counter() - start
    return np.concatenate(outs)[:n], seconds


# --------------------------------------------------------------------- peers

def torch_eager(model, threads, batch, ctx):
    import torch
    torch.set_num_threads(threads)

    def fn(x):
        with torch.inference_mode():
            return model(torch.from_numpy(x)).numpy()
    return fn, f"torch {torch.__version__} eager, inference_mode"


def torch_compile(model, threads, batch, ctx):
    import torch
    torch.set_num_threads(threads)
    torch._dynamo.reset()
    compiled = torch.compile(model, dynamic=False)

    def fn(x):
        with torch.inference_mode():
            return compiled(torch.from_numpy(x)).numpy()
    return fn, f"torch {torch.__version__} torch.compile (inductor, dynamic=False), inference_mode"


def onnx_file(model, ctx):
    """The module exported once to ONNX with a dynamic batch axis."""
    if "onnx" not in ctx:
        import torch
        path = os.path.join(ctx["tmp"], "vit-fashion-mnist.onnx")
        dummy = torch.zeros(2, 1, ctx["spec"]["image_size"], ctx["spec"]["image_size"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, (dummy,), path, input_names=["images"],
                              output_names=["logits"], opset_version=17,
                              dynamic_axes={"images": {0: "batch"}, "logits": {0: "batch"}},
                              dynamo=False)
        ctx["onnx"] = path
    return ctx["onnx"]


def onnxruntime_session(model, threads, ctx):
    """A CPU session of the ONNX file: `threads` intra-op threads, sequential
    execution, every graph optimization."""
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(onnx_file(model, ctx), opts, providers=["CPUExecutionProvider"])


def onnxruntime_peer(model, threads, batch, ctx):
    import onnxruntime as ort
    sess = onnxruntime_session(model, threads, ctx)

    def fn(x):
        return sess.run(None, {"images": x})[0]
    return fn, (f"onnxruntime {ort.__version__} CPUExecutionProvider, intra_op_num_threads "
                f"{threads}, sequential, ORT_ENABLE_ALL; ONNX opset 17 (TorchScript exporter)")


def openvino_compiled(model, threads, batch, ctx, streams, hint):
    """The ONNX file reshaped to the static batch, compiled for the CPU in f32."""
    import openvino as ov
    core = ov.Core()
    m = core.read_model(onnx_file(model, ctx))
    s = ctx["spec"]["image_size"]
    m.reshape({"images": [batch, 1, s, s]})
    config = {"INFERENCE_NUM_THREADS": threads, "NUM_STREAMS": streams,
              "PERFORMANCE_HINT": hint, "INFERENCE_PRECISION_HINT": "f32"}
    return core.compile_model(m, "CPU", config)


def openvino_peer(model, threads, batch, ctx):
    import openvino as ov
    compiled = openvino_compiled(model, threads, batch, ctx, 1, "LATENCY")
    request = compiled.create_infer_request()
    out = compiled.output(0)

    def fn(x):
        return request.infer({0: x})[out].copy()
    return fn, (f"openvino {ov.__version__} CPU, INFERENCE_NUM_THREADS {threads}, NUM_STREAMS 1, "
                f"LATENCY, f32, static batch; from the ONNX file")


def single(run_all):
    """fn of one batch for a peer whose run_all takes a list of batches."""
    def fn(x):
        return run_all([x])[0]
    fn.run_all = run_all
    return fn


def onnxruntime_sessions_peer(model, threads, batch, ctx):
    import concurrent.futures
    import onnxruntime as ort
    sessions = [onnxruntime_session(model, 1, ctx) for _ in range(threads)]
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=threads)
    ctx.setdefault("cleanup", []).append(pool.shutdown)

    def run_all(chunks):
        # Worker w takes batches w, w + threads, ...: one session each.
        def work(w):
            return [(i, sessions[w].run(None, {"images": chunks[i]})[0])
                    for i in range(w, len(chunks), threads)]
        outs = [None] * len(chunks)
        for part in pool.map(work, range(threads)):
            for i, out in part:
                outs[i] = out
        return outs
    return single(run_all), (f"onnxruntime {ort.__version__} CPUExecutionProvider, {threads} "
                             f"session(s) of 1 intra-op thread side by side, ORT_ENABLE_ALL; "
                             f"ONNX opset 17 (TorchScript exporter)")


def openvino_streams_peer(model, threads, batch, ctx):
    import openvino as ov
    compiled = openvino_compiled(model, threads, batch, ctx, threads, "THROUGHPUT")
    queue = ov.AsyncInferQueue(compiled, threads)

    def run_all(chunks):
        outs = [None] * len(chunks)

        def done(request, i):
            outs[i] = request.get_output_tensor(0).data.copy()
        queue.set_callback(done)
        for i, chunk in enumerate(chunks):
            queue.start_async({0: chunk}, i)
        queue.wait_all()
        return outs
    streams = compiled.get_property("NUM_STREAMS")
    return single(run_all), (f"openvino {ov.__version__} CPU, THROUGHPUT, NUM_STREAMS {streams}, "
                             f"INFERENCE_NUM_THREADS {threads}, AsyncInferQueue of {threads}, f32, "
                             f"static batch; from the ONNX file")


BUILDERS = {"torch-eager": torch_eager, "torch-compile": torch_compile,
            "onnxruntime": onnxruntime_peer, "openvino": openvino_peer,
            "onnxruntime-sessions": onnxruntime_sessions_peer,
            "openvino-streams": openvino_streams_peer}


# ---------------------------------------------------------------------- main

def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--peers", type=csv(), default=list(PEERS), help=",".join(PEERS))
    p.add_argument("--threads", type=csv(int), default=[1, 2])
    p.add_argument("--batches", type=csv(int), default=[100, 500])
    p.add_argument("--limit", type=int, default=None, help="use the first N test images")
    p.add_argument("--repeat", type=int, default=1, help="timed passes per configuration (best)")
    p.add_argument("--model", default=os.path.join(ROOT, "models", "vit-fashion-mnist"),
                   help="path prefix of .json, .safetensors and .torch.json")
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    args = p.parse_args()
    bad = [x for x in args.peers if x not in PEERS]
    if bad:
        p.error(f"--peers: {', '.join(bad)} not in {', '.join(PEERS)}")
    if min(args.threads + args.batches) < 1 or (args.limit is not None and args.limit < 1):
        p.error("--threads, --batches and --limit must be positive")

    import torch
    import attn_torch as at
    spec = json.load(open(args.model + ".json"))
    model = at.build_vit(spec)
    model.load_state_dict(at.read_safetensors(args.model + ".safetensors"))
    model.eval()
    x, y = at.load_fashion_mnist(args.data, "t10k")
    x = at.normalize(x, spec)
    if args.limit is not None:
        x, y = x[:args.limit], y[:args.limit]
    x, y, n = x.numpy(), y.numpy(), len(x)

    # torch-eager's logits (untimed, batch 100, the machine's threads): the
    # reference of the logit differences and, with --limit, of the accuracy.
    torch.set_num_threads(max(args.threads))
    ref_fn, _ = torch_eager(model, max(args.threads), 100, None)
    ref_logits, _ = run_pass(ref_fn, batches_of(x, 100), n)
    eager_acc = float((ref_logits.argmax(-1) == y).mean())
    if args.limit is None or args.limit >= 10000:
        recorded = json.load(open(args.model + ".torch.json"))["test_accuracy"]
        want, want_from = recorded, "PyTorch's recorded accuracy"
    else:
        want, want_from = eager_acc, f"torch-eager's accuracy on the first {n} images"
    print(f"vit_peers: {n} images, reference accuracy {want:.4f} ({want_from}); "
          f"torch-eager here {eager_acc:.4f}", file=sys.stderr, flush=True)

    failed_numerics, failed_runs = [], False
    with tempfile.TemporaryDirectory(prefix="vit-peers-") as tmp:
        ctx = {"tmp": tmp, "spec": spec}
        for peer in args.peers:
            for threads in args.threads:
                rows = []
                for batch in args.batches:
                    row = {"peer": peer, "threads": threads, "batch": batch}
                    try:
                        fn, note = BUILDERS[peer](model, threads, batch, ctx)
                        chunks = batches_of(x, batch)
                        # Warm-up (compilation, thread pools, first touch): a batch
                        # for each session or stream of the peers that run several.
                        run_all = getattr(fn, "run_all", None)
                        if run_all:
                            run_all(chunks[:threads])
                        else:
                            fn(chunks[0])
                        best = math.inf
                        for _ in range(max(1, args.repeat)):
                            logits, seconds = run_pass(fn, chunks, n)
                            best = min(best, seconds)
                        acc = float((logits.argmax(-1) == y).mean())
                        diff = float(np.abs(logits - ref_logits).max())
                        row.update(images_per_s=round(n / best, 1), accuracy=round(acc, 4),
                                   note=f"{note}; max |logit - torch-eager| {diff:.2e}")
                        if abs(acc - want) > TOLERANCE:
                            failed_numerics.append(f"{peer} (threads {threads}, batch {batch}): "
                                                   f"accuracy {acc:.4f}, want {want:.4f}")
                    except Exception as exc:  # report and go on
                        failed_runs = True
                        row.update(images_per_s=None, accuracy=None, note="",
                                   error=f"{type(exc).__name__}: {exc}".splitlines()[0][:300])
                    # Thread pools and sessions of this configuration go now.
                    for cleanup in ctx.pop("cleanup", []):
                        cleanup()
                    print(json.dumps(row), flush=True)
                    rows.append(row)
                    if failed_numerics:
                        sys.exit(f"vit_peers: numerics check failed: {failed_numerics[0]} "
                                 f"({want_from}, tolerance {TOLERANCE})")
                ok = [r for r in rows if r["images_per_s"] is not None]
                if ok:
                    top = max(ok, key=lambda r: r["images_per_s"])
                    print(json.dumps({"peer": peer, "threads": threads, "batch": top["batch"],
                                      "images_per_s": top["images_per_s"],
                                      "accuracy": top["accuracy"], "best": True,
                                      "note": "best of batches "
                                              + ",".join(str(b) for b in args.batches)}),
                          flush=True)
    return 2 if failed_runs else 0


if __name__ == "__main__":
    sys.exit(main())
