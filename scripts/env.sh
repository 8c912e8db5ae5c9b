# Sourced by scripts/start and scripts/test: the environment worker-build and wrangler need on
# this kind of machine (TOOLCHAIN.md). worker-build would otherwise download wasm-bindgen and
# wasm-opt from GitHub, which is unreachable here; wrangler must stay offline.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export PATH="$root/node_modules/.bin:$HOME/.cargo/bin:$PATH"
export WASM_BINDGEN_BIN="$HOME/.cargo/bin/wasm-bindgen"
export WASM_OPT_BIN="$root/node_modules/.bin/wasm-opt"
export ESBUILD_BIN="$root/node_modules/.bin/esbuild"
export WRANGLER_SEND_METRICS=false
export CLOUDFLARE_CF_FETCH_ENABLED=false
export CI=true
