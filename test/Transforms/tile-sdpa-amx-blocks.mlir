// attn-tile's default query tile for bf16 attention on AMX tiles: 32 rows
// where a 64-row step's data (Q, K, V, scores, P, accumulators) overflows
// the AMX core's 48 KB L1 and a 32-row one's fits (E = 64); otherwise, and
// without AMX or with block-q given, the target's default.
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=sapphirerapids" --attn-tile | FileCheck %s --check-prefix=AMX
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=sapphirerapids" --attn-tile="block-q=64" | FileCheck %s --check-prefix=ROWS64
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=znver4" --attn-tile | FileCheck %s --check-prefix=ROWS64

// AMX-LABEL: func @e64
// AMX: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<32x32x2xbf16>, tensor<32x64x2xbf16>) outs(%{{.+}} : tensor<32x64xf32>)
// ROWS64-LABEL: func @e64
// ROWS64: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<64x32x2xbf16>, tensor<32x64x2xbf16>) outs(%{{.+}} : tensor<64x64xf32>)
func.func @e64(%q: tensor<1x2x128x64xbf16>, %k: tensor<1x2x128x64xbf16>, %v: tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16> {
  %o = attn.sdpa %q, %k, %v {mask = #attn.mask<causal>}
      : (tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16>
  return %o : tensor<1x2x128x64xbf16>
}

// -----

// E = 128: no 32-row step fits either; 64 rows measured faster.
// AMX-LABEL: func @e128
// AMX: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<64x64x2xbf16>, tensor<64x64x2xbf16>) outs(%{{.+}} : tensor<64x64xf32>)
// ROWS64-LABEL: func @e128
// ROWS64: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<64x64x2xbf16>, tensor<64x64x2xbf16>) outs(%{{.+}} : tensor<64x64xf32>)
func.func @e128(%q: tensor<1x1x128x128xbf16>, %k: tensor<1x1x128x128xbf16>, %v: tensor<1x1x128x128xbf16>) -> tensor<1x1x128x128xbf16> {
  %o = attn.sdpa %q, %k, %v
      : (tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>) -> tensor<1x1x128x128xbf16>
  return %o : tensor<1x1x128x128xbf16>
}
