// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v4" --attn-lower-vectors | FileCheck %s --check-prefix=AVX512
// RUN: attn-opt %s --split-input-file --attn-set-target="cpu=x86-64-v3" --attn-lower-vectors | FileCheck %s --check-prefix=AVX2
// RUN: attn-opt %s --split-input-file --attn-set-target="triple=aarch64-unknown-linux-gnu cpu=neoverse-n1" --attn-lower-vectors | FileCheck %s --check-prefix=NEON

// A lanes x cols row reduction (attn-vectorize's blocks of rows, the online
// softmax's row max) into one vector of lanes: each row's cols / lanes
// vectors are combined into one, then the rows in pairs, two shuffles and one
// combine per pair (15 pairs for 16 lanes, 7 for 8, 3 for 4), and the
// accumulator last; no horizontal reduction per row. maxnumf assumes no NaN
// there.

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
// The third: four rows per vector, four lanes each.
// AVX512-COUNT-7: vector.shuffle
// AVX512: vector.shuffle %{{.+}}, %{{.+}} [0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29] : vector<16xf32>, vector<16xf32>
// The last: eight rows per vector, two lanes each.
// AVX512-COUNT-3: vector.shuffle
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

// One vector per row (cols = lanes): the first pair is rows 0 and 1 in that
// order, the last combine takes the accumulator. maximumf (NaN-propagating)
// keeps its semantics: no fast-math flags.

// NEON-LABEL: func @row_maximum
// NEON-SAME: %[[S:[a-z0-9]+]]: vector<4x4xf32>, %[[ACC:[a-z0-9]+]]: vector<4xf32>
// NEON-NOT: vector.reduction
// NEON-DAG: %[[R0:.+]] = vector.extract %[[S]][0] : vector<4xf32> from vector<4x4xf32>
// NEON-DAG: %[[R1:.+]] = vector.extract %[[S]][1] : vector<4xf32> from vector<4x4xf32>
// NEON-DAG: %[[R2:.+]] = vector.extract %[[S]][2] : vector<4xf32> from vector<4x4xf32>
// NEON-DAG: %[[R3:.+]] = vector.extract %[[S]][3] : vector<4xf32> from vector<4x4xf32>
// NEON: %[[A:.+]] = vector.shuffle %[[R0]], %[[R1]] [0, 1, 4, 5] : vector<4xf32>, vector<4xf32>
// NEON: %[[B:.+]] = vector.shuffle %[[R0]], %[[R1]] [2, 3, 6, 7] : vector<4xf32>, vector<4xf32>
// NEON: %[[P01:.+]] = arith.maximumf %[[A]], %[[B]] : vector<4xf32>
// NEON: %[[C:.+]] = vector.shuffle %[[R2]], %[[R3]] [0, 1, 4, 5] : vector<4xf32>, vector<4xf32>
// NEON: %[[D:.+]] = vector.shuffle %[[R2]], %[[R3]] [2, 3, 6, 7] : vector<4xf32>, vector<4xf32>
// NEON: %[[P23:.+]] = arith.maximumf %[[C]], %[[D]] : vector<4xf32>
// NEON: %[[E:.+]] = vector.shuffle %[[P01]], %[[P23]] [0, 2, 4, 6] : vector<4xf32>, vector<4xf32>
// NEON: %[[F:.+]] = vector.shuffle %[[P01]], %[[P23]] [1, 3, 5, 7] : vector<4xf32>, vector<4xf32>
// NEON: %[[TREE:.+]] = arith.maximumf %[[E]], %[[F]] : vector<4xf32>
// NEON: %[[OUT:.+]] = arith.maximumf %[[TREE]], %[[ACC]] : vector<4xf32>
// NEON: return %[[OUT]]
func.func @row_maximum(%s: vector<4x4xf32>, %acc: vector<4xf32>) -> vector<4xf32> {
  %m = vector.multi_reduction <maximumf>, %s, %acc [1] : vector<4x4xf32> to vector<4xf32>
  return %m : vector<4xf32>
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

// -----

// Other combining kinds keep the per-row lowering.

// AVX512-LABEL: func @row_min
// AVX512-NOT: vector.shuffle
// AVX512-COUNT-16: vector.reduction <minnumf>
func.func @row_min(%s: vector<16x64xf32>, %acc: vector<16xf32>) -> vector<16xf32> {
  %m = vector.multi_reduction <minnumf>, %s, %acc [1] : vector<16x64xf32> to vector<16xf32>
  return %m : vector<16xf32>
}
