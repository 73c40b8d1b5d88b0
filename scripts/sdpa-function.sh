# Sourced by cpu-check.sh, gpu-check.sh and sdpa-rounds.sh.
#
#   sdpa_function FILE TYPE MASK
#
# writes to FILE a function @f(%q, %k, %v) -> TYPE of one attn.sdpa on three
# TYPE tensors (e.g. tensor<1x8x1024x64xf32>), MASK dense or causal.
sdpa_function() {
  local file=$1 t=$2 attr=""
  case $3 in
    dense) ;;
    causal) attr="{mask = #attn.mask<causal>}" ;;
    *) echo "sdpa_function: MASK must be dense or causal, not '$3'" >&2; return 1 ;;
  esac
  cat > "$file" <<MLIR
func.func @f(%q: $t, %k: $t, %v: $t) -> $t {
  %o = attn.sdpa %q, %k, %v $attr : ($t, $t, $t) -> $t
  return %o : $t
}
MLIR
}
