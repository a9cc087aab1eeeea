#!/usr/bin/env bash
# fake-cuobjdump: a stand-in for `cuobjdump -symbols -sass CUBIN` on machines without the
# CUDA toolkit's disassembler. The fake harness's --cubin-out writes the kernel's source after
# a FAKE-CUBIN line; a FAKE_SASS=NAME marker in it picks tests/fixtures/sass/NAME.sass (text
# captured from real cubins), printed with its kernel (FAKE_ENTRY=NAME, default plain) renamed
# to the source's first __global__ function; without a marker, plain_sm90. Anything that is
# not a fake cubin fails as the real tool does.
set -u
cubin=${!#}
fixtures="$(cd "$(dirname "$0")" && pwd)/fixtures/sass"
if [[ "$(head -c 10 "$cubin" 2>/dev/null)" != FAKE-CUBIN ]]; then
  echo "cuobjdump fatal   : Invalid fatbin header in '$cubin'" >&2
  exit 1
fi
name=$(grep -o 'FAKE_SASS=[a-z0-9_]*' "$cubin" | head -1 | cut -d= -f2)
entry=$(grep -o 'FAKE_ENTRY=[a-z0-9_]*' "$cubin" | head -1 | cut -d= -f2)
target=$(grep -o -E '__global__ void [A-Za-z0-9_]+' "$cubin" | head -1 | awk '{print $3}')
name=${name:-plain_sm90}
entry=${entry:-plain}
sed -e "s/Function : ${entry}\$/Function : ${target}/" -e "s/STO_ENTRY *${entry}\$/STO_ENTRY      ${target}/" "$fixtures/$name.sass"
