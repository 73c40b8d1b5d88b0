// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v4" --attn-lower-vectors | FileCheck %s --check-prefix=AVX512
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v3" --attn-lower-vectors | FileCheck %s --check-prefix=AVX2

// A lanes x cols row reduction (attn-vectorize's blocks of rows, the online
// softmax's row max) into one vector of lanes: each row's cols / lanes
// vectors are combined into one, then the rows in pairs, two shuffles and one
// combine per pair (15 pairs for 16 lanes, 7 for 8), and the accumulator
// last; no horizontal reduction per row. maxnumf assumes no NaN there.

// AVX512-LABEL: func @row_max
// AVX512-SAME: %[[ACC:[a-z0-9]+]]: vector<16xf32>
// AVX512-NOT: vector.reduction
// AVX512-COUNT-48: arith.maxnumf {{.*}} fastmath<nnan> : vector<16xf32>
// The first pair: the first halves of rows 0 and 1, then their second halves.
// AVX512: %[[LO:.+]] = vector.shuffle %[[R0:.+]], %[[R1:.+]] [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23] : vector<16xf32>, vector<16xf32>
// AVX512: %[[HI:.+]] = vector.shuffle %[[R0]], %[[R1]] [8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31] : vector<16xf32>, vector<16xf32>
// AVX512: arith.maxnumf %[[LO]], %[[HI]] fastmath<nnan> : vector<16xf32>
// AVX512-COUNT-7: vector.shuffle
// The second level: two rows per vector, halves of each row's 8 lanes.
// AVX512: vector.shuffle %{{.+}}, %{{.+}} [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27] : vector<16xf32>, vector<16xf32>
// The last level: eight rows per vector, two lanes each.
// AVX512-COUNT-10: vector.shuffle
// AVX512: vector.shuffle %{{.+}}, %{{.+}} [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30] : vector<16xf32>, vector<16xf32>
// AVX512: vector.shuffle %{{.+}}, %{{.+}} [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31] : vector<16xf32>, vector<16xf32>
// AVX512: %[[TREE:.+]] = arith.maxnumf
// AVX512: %[[OUT:.+]] = arith.maxnumf %[[TREE]], %[[ACC]] fastmath<nnan> : vector<16xf32>
// AVX512-NOT: vector.shuffle
// AVX512: return %[[OUT]]

// On AVX2 (8 lanes) the rows come in blocks of 8: a 16-row block is left to
// the per-row lowering.
// AVX2-LABEL: func @row_max
// AVX2: vector.reduction <maxnumf>
func.func @row_max(%s: vector<16x64xf32>, %acc: vector<16xf32>) -> vector<16xf32> {
  %m = vector.multi_reduction <maxnumf>, %s, %acc [1] : vector<16x64xf32> to vector<16xf32>
  return %m : vector<16xf32>
}

// -----

// Sums the same way (the final row sums of the online softmax's lanes).

// AVX2-LABEL: func @row_sum
// AVX2-SAME: %[[ACC:[a-z0-9]+]]: vector<8xf32>
// AVX2-NOT: vector.reduction
// AVX2-COUNT-8: arith.addf {{.*}} fastmath<reassoc> : vector<8xf32>
// AVX2: vector.shuffle %{{.+}}, %{{.+}} [0, 1, 2, 3, 8, 9, 10, 11] : vector<8xf32>, vector<8xf32>
// AVX2: vector.shuffle %{{.+}}, %{{.+}} [4, 5, 6, 7, 12, 13, 14, 15] : vector<8xf32>, vector<8xf32>
// AVX2-COUNT-12: vector.shuffle
// AVX2: %[[TREE:.+]] = arith.addf
// AVX2: %[[OUT:.+]] = arith.addf %[[TREE]], %[[ACC]] fastmath<reassoc> : vector<8xf32>
// AVX2: return %[[OUT]]
func.func @row_sum(%s: vector<8x16xf32>, %acc: vector<8xf32>) -> vector<8xf32> {
  %m = vector.multi_reduction <add>, %s, %acc [1] : vector<8x16xf32> to vector<8xf32>
  return %m : vector<8xf32>
}
