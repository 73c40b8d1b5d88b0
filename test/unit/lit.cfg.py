# -*- Python -*-
# Runs the GoogleTest unit tests (attn-unittests) as lit tests, one per TEST.

import lit.formats

config.name = "ATTN-Unit"
config.suffixes = []
config.test_source_root = config.unit_test_dir
config.test_exec_root = config.unit_test_dir
config.test_format = lit.formats.GoogleTest(".", "unittests")
