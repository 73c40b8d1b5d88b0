// RUN: attn-opt %s --split-input-file --attn-lower-amx | FileCheck %s

// QK^T of a 64-row query tile and 64 keys, E = 64 (32 pairs): blocks of
// 2 x 2 accumulator tiles, loaded from C, two steps of 16 pairs (A's rows
// and B's pairs of 16 columns, the pair dimension collapsed into the row),
// stored back.
// CHECK-LABEL: func @scores
// CHECK-DAG: %[[A:.+]] = memref.collapse_shape %arg0 {{\[}}[0], [1, 2]] : memref<64x32x2xbf16> into memref<64x64xbf16>
// CHECK-DAG: %[[B:.+]] = memref.collapse_shape %arg1 {{\[}}[0], [1, 2]] : memref<32x64x2xbf16, strided<[128, 2, 1], offset: ?>> into memref<32x128xbf16, strided<[128, 1], offset: ?>>
// CHECK: scf.for %[[I:.+]] = %c0 to %c64 step %c32
// CHECK: scf.for %[[J:.+]] = %c0 to %c64 step %c32
// CHECK-DAG: %[[I1:.+]] = arith.addi %[[I]], %c16
// CHECK-DAG: %[[J1:.+]] = arith.addi %[[J]], %c16
// B's row holds the pairs of its columns: column j at 2j.
// CHECK-DAG: %[[BJ:.+]] = arith.muli %[[J]], %c2
// CHECK-DAG: %[[BJ1:.+]] = arith.muli %[[J1]], %c2
// CHECK: %[[C00:.+]] = amx.tile_load %arg2[%[[I]], %[[J]]] : memref<64x64xf32> into !amx.tile<16x16xf32>
// CHECK: %[[C01:.+]] = amx.tile_load %arg2[%[[I]], %[[J1]]]
// CHECK: %[[C10:.+]] = amx.tile_load %arg2[%[[I1]], %[[J]]]
// CHECK: %[[C11:.+]] = amx.tile_load %arg2[%[[I1]], %[[J1]]]
// CHECK: %[[A0:.+]] = amx.tile_load %[[A]][%[[I]], %c0] : memref<64x64xbf16> into !amx.tile<16x32xbf16>
// CHECK: %[[A1:.+]] = amx.tile_load %[[A]][%[[I1]], %c0]
// CHECK: %[[B0:.+]] = amx.tile_load %[[B]][%c0, %[[BJ]]] : memref<32x128xbf16, strided<[128, 1], offset: ?>> into !amx.tile<16x32xbf16>
// CHECK: %[[B1:.+]] = amx.tile_load %[[B]][%c0, %[[BJ1]]]
// CHECK: %[[D00:.+]] = amx.tile_mulf %[[A0]], %[[B0]], %[[C00]]
// CHECK: %[[D01:.+]] = amx.tile_mulf %[[A0]], %[[B1]], %[[C01]]
// CHECK: %[[D10:.+]] = amx.tile_mulf %[[A1]], %[[B0]], %[[C10]]
// CHECK: %[[D11:.+]] = amx.tile_mulf %[[A1]], %[[B1]], %[[C11]]
// CHECK: %[[A2:.+]] = amx.tile_load %[[A]][%[[I]], %c32]
// CHECK: amx.tile_load %[[A]][%[[I1]], %c32]
// CHECK: %[[B2:.+]] = amx.tile_load %[[B]][%c16, %[[BJ]]]
// CHECK: amx.tile_load %[[B]][%c16, %[[BJ1]]]
// CHECK: %[[E00:.+]] = amx.tile_mulf %[[A2]], %[[B2]], %[[D00]]
// CHECK-COUNT-3: amx.tile_mulf
// CHECK: amx.tile_store %arg2[%[[I]], %[[J]]], %[[E00]]
// CHECK-COUNT-3: amx.tile_store %arg2
// CHECK-NOT: amx.tile_
// CHECK-NOT: linalg.generic
#a = affine_map<(m, n, k, p) -> (m, k, p)>
#b = affine_map<(m, n, k, p) -> (k, n, p)>
#c = affine_map<(m, n, k, p) -> (m, n)>
func.func @scores(%a: memref<64x32x2xbf16>, %b: memref<32x64x2xbf16, strided<[128, 2, 1], offset: ?>>, %c: memref<64x64xf32>) attributes {target_cpu = "sapphirerapids"} {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %b : memref<64x32x2xbf16>, memref<32x64x2xbf16, strided<[128, 2, 1], offset: ?>>) outs(%c : memref<64x64xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

// C filled with +0 right before the contraction (Q K^T's scores): the
// accumulator tiles start from tilezero and the fill goes away. A fill of
// another value, or one with an op between it and the contraction, stays
// and C's tiles are loaded.
// CHECK-LABEL: func @zero_filled
// CHECK-NOT: linalg.fill
// CHECK-COUNT-4: amx.tile_zero : !amx.tile<16x16xf32>
// CHECK-NOT: amx.tile_load %arg2
// CHECK: amx.tile_mulf
// CHECK-COUNT-4: amx.tile_store %arg2
// CHECK-LABEL: func @filled_with_one
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg2 : memref<32x32xf32>)
// CHECK-NOT: amx.tile_zero
// CHECK-COUNT-4: amx.tile_load %arg2
// A copy into C right before the contraction (bufferization's copy of one
// zero-filled buffer into every key tile's scores) is read through when C
// is an alloc of its own: the accumulator tiles are loaded from the copy's
// source, and the copy goes away. Into a function argument (which may
// alias the source), the copy stays.
// CHECK-LABEL: func @fill_then_copy
// CHECK: linalg.fill
// CHECK: memref.copy
// CHECK-NOT: amx.tile_zero
// CHECK-COUNT-4: amx.tile_load %arg2
// CHECK-LABEL: func @fill_read_by_factor
// CHECK: linalg.fill
// CHECK-NOT: amx.tile_zero
// CHECK-COUNT-4: amx.tile_load %[[CV:.+]][
// CHECK-LABEL: func @copied_from
// CHECK: %[[C:.+]] = memref.alloc
// CHECK-NOT: memref.copy
// CHECK: amx.tile_load %arg2[%{{.+}}, %{{.+}}] : memref<32x32xf32, strided<[64, 1]>> into !amx.tile<16x16xf32>
// CHECK-COUNT-3: amx.tile_load %arg2
// CHECK-NOT: amx.tile_load %[[C]]
// CHECK-COUNT-4: amx.tile_store %[[C]]
#a = affine_map<(m, n, k, p) -> (m, k, p)>
#b = affine_map<(m, n, k, p) -> (k, n, p)>
#c = affine_map<(m, n, k, p) -> (m, n)>
func.func @zero_filled(%a: memref<32x16x2xbf16>, %b: memref<16x32x2xbf16>, %c: memref<32x32xf32>) attributes {target_cpu = "sapphirerapids"} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<32x32xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %b : memref<32x16x2xbf16>, memref<16x32x2xbf16>) outs(%c : memref<32x32xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}
func.func @filled_with_one(%a: memref<32x16x2xbf16>, %b: memref<16x32x2xbf16>, %c: memref<32x32xf32>) attributes {target_cpu = "sapphirerapids"} {
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%c : memref<32x32xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %b : memref<32x16x2xbf16>, memref<16x32x2xbf16>) outs(%c : memref<32x32xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}
func.func @fill_then_copy(%a: memref<32x16x2xbf16>, %b: memref<16x32x2xbf16>, %c: memref<32x32xf32>, %d: memref<32x32xf32>) attributes {target_cpu = "sapphirerapids"} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<32x32xf32>)
  memref.copy %d, %c : memref<32x32xf32> to memref<32x32xf32>
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %b : memref<32x16x2xbf16>, memref<16x32x2xbf16>) outs(%c : memref<32x32xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}
// A fill of +0 into C where a factor is a view of the same bytes: the
// factor reads the zeros, so the fill stays and C's tiles are loaded.
func.func @fill_read_by_factor(%b: memref<16x32x2xbf16>) attributes {target_cpu = "sapphirerapids"} {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %bytes = memref.alloc() : memref<4096xi8>
  %c = memref.view %bytes[%c0][] : memref<4096xi8> to memref<32x32xf32>
  %a = memref.view %bytes[%c0][] : memref<4096xi8> to memref<32x16x2xbf16>
  linalg.fill ins(%zero : f32) outs(%c : memref<32x32xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %b : memref<32x16x2xbf16>, memref<16x32x2xbf16>) outs(%c : memref<32x32xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}
func.func @copied_from(%a: memref<32x16x2xbf16>, %b: memref<16x32x2xbf16>, %src: memref<32x32xf32, strided<[64, 1]>>) -> memref<32x32xf32> attributes {target_cpu = "sapphirerapids"} {
  %c = memref.alloc() : memref<32x32xf32>
  memref.copy %src, %c : memref<32x32xf32, strided<[64, 1]>> to memref<32x32xf32>
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %b : memref<32x16x2xbf16>, memref<16x32x2xbf16>) outs(%c : memref<32x32xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return %c : memref<32x32xf32>
}

// -----

// 16 rows and 48 columns: single tile rows, single tile columns.
// CHECK-LABEL: func @thin
// CHECK: scf.for {{.*}} = %c0 to %c16 step %c16
// CHECK: scf.for {{.*}} = %c0 to %c48 step %c16
// CHECK-COUNT-1: amx.tile_load %arg2
// CHECK-COUNT-1: amx.tile_mulf
// CHECK-COUNT-1: amx.tile_store
// CHECK-NOT: amx.tile_
#a = affine_map<(m, n, k, p) -> (m, k, p)>
#b = affine_map<(m, n, k, p) -> (k, n, p)>
#c = affine_map<(m, n, k, p) -> (m, n)>
func.func @thin(%a: memref<16x16x2xbf16>, %b: memref<16x48x2xbf16>, %c: memref<16x48xf32>) attributes {target_cpu = "sapphirerapids"} {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %b : memref<16x16x2xbf16>, memref<16x48x2xbf16>) outs(%c : memref<16x48xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

// Left as they are: a target without AMX (Zen 4: AVX512-BF16 only), 8 rows
// (not a multiple of 16), pairs that are not contiguous with their row
// (B's pair stride 4), rows that collapse to a stride of 2 (A's elements
// every other bf16), and f32 factors.
// CHECK-LABEL: func @left
// CHECK-NOT: amx.tile_
// CHECK-COUNT-5: linalg.generic
// CHECK-NOT: amx.tile_
#a = affine_map<(m, n, k, p) -> (m, k, p)>
#b = affine_map<(m, n, k, p) -> (k, n, p)>
#c = affine_map<(m, n, k, p) -> (m, n)>
func.func @left(%a: memref<16x16x2xbf16>, %b: memref<16x16x2xbf16>, %c: memref<16x16xf32>) attributes {target_cpu = "znver4"} {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %b : memref<16x16x2xbf16>, memref<16x16x2xbf16>) outs(%c : memref<16x16xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}
func.func @left_spr(%a8: memref<8x16x2xbf16>, %b: memref<16x16x2xbf16>, %c8: memref<8x16xf32>,
                    %a: memref<16x16x2xbf16>, %bs: memref<16x16x2xbf16, strided<[64, 4, 1]>>, %c: memref<16x16xf32>,
                    %af: memref<16x16x2xf32>, %bf: memref<16x16x2xf32>,
                    %a2: memref<16x16x2xbf16, strided<[128, 4, 2]>>) attributes {target_cpu = "sapphirerapids"} {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a2, %b : memref<16x16x2xbf16, strided<[128, 4, 2]>>, memref<16x16x2xbf16>) outs(%c : memref<16x16xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a8, %b : memref<8x16x2xbf16>, memref<16x16x2xbf16>) outs(%c8 : memref<8x16xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %bs : memref<16x16x2xbf16>, memref<16x16x2xbf16, strided<[64, 4, 1]>>) outs(%c : memref<16x16xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%af, %bf : memref<16x16x2xf32>, memref<16x16x2xf32>) outs(%c : memref<16x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %2 = arith.mulf %x, %y : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}
