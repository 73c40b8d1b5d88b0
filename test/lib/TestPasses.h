//===- TestPasses.h - passes that exist only for tests ----------*- C++ -*-===//

#ifndef ATTN_TEST_LIB_TESTPASSES_H
#define ATTN_TEST_LIB_TESTPASSES_H

namespace mlir::attn {
/// Registers the `test-attn-*` passes with the global pass registry.
void registerAttnTestPasses();
} // namespace mlir::attn

#endif // ATTN_TEST_LIB_TESTPASSES_H
