#!/usr/bin/env bash
# The published TypeScript surface of weft-sdk changes only on purpose: compares the generated
# pkg/weft_sdk.d.ts (run scripts/build-sdk first) with the committed tests/sdk/weft_sdk.d.ts, and
# every other entry's (pkg/with-agui/, pkg/loom/, …: each build has the same surface) with it.
#
#   tests/sdk/check-dts.sh           fail with the diff when they differ
#   tests/sdk/check-dts.sh --bless   accept the generated one (then review and commit the diff)
#
# The declarations come from doc comments and types in crates/sdk and the tsify attributes in
# crates/protocol, so a changed doc comment there shows up here too: that is the point.
# (Function-name hashes of the wasm's internals are masked: see `mask` below.)
set -euo pipefail
cd "$(dirname "$0")/../.."

generated=pkg/weft_sdk.d.ts
committed=tests/sdk/weft_sdk.d.ts

if [ ! -f "$generated" ]; then
  echo "check-dts: $generated is missing; run scripts/build-sdk first" >&2
  exit 1
fi
if [ "${1:-}" = "--bless" ]; then
  cp "$generated" "$committed"
  echo "check-dts: blessed $committed; review it with git diff"
  exit 0
fi
# The wasm's internal closure shims (in `InitOutput`) are named from mangled symbols (crate and
# symbol hashes that change with any change to the crate graph or the toolchain); they are not
# part of the surface, so their names are masked.
mask() { sed -E 's/readonly wasm_bindgen[A-Za-z0-9_…]*convert__closures[A-Za-z0-9_…]*:/readonly <closure shim>:/' "$1"; }
if ! diff -u <(mask "$committed") <(mask "$generated"); then
  echo >&2
  echo "check-dts: the TypeScript surface of weft-sdk changed (diff above)." >&2
  echo "check-dts: if that is intended, run tests/sdk/check-dts.sh --bless and commit it." >&2
  exit 1
fi
echo "check-dts: pkg/weft_sdk.d.ts matches $committed"
# The other entries' builds: the same surface, whatever dialects each speaks (scripts/build-sdk
# writes them all; a missing one is an error, not a pass).
for entry in with-agui loom agentloop agentchat cueso agui-client; do
  other=pkg/$entry/weft_sdk.d.ts
  if [ ! -f "$other" ]; then
    echo "check-dts: $other is missing; run scripts/build-sdk first" >&2
    exit 1
  fi
  if ! diff -u <(mask "$generated") <(mask "$other"); then
    echo "check-dts: $other differs from $generated: every entry must have one surface" >&2
    exit 1
  fi
done
echo "check-dts: every entry's weft_sdk.d.ts is the same"
