#!/bin/sh
# nodecm checkpoint on the device manager's kubelet_internal_checkpoint: the kind is found
# from the content; verify/show/rewrite with the kubelet's checksum; bad input.
. "$(dirname "$0")/lib.sh"
D="$DATA/devices"

for f in ckpt-empty ckpt-one-gpu ckpt-mixed-numa ckpt-registered-empty ckpt-kubelet-registered \
        ckpt-kubelet-tegra; do
        run checkpoint verify "$D/$f.json"
        expect_rc 0 "verify $f"
        case "$OUT" in
        *"kubelet_internal_checkpoint"*"verified") ;;
        *) fail "verify $f: summary was [$OUT]" ;;
        esac
done

run checkpoint show "$D/ckpt-one-gpu.json"
expect_rc 0 "show"
expect_golden devices/show-ckpt-one-gpu.txt "show one gpu"
run checkpoint show --json "$D/ckpt-mixed-numa.json"
expect_rc 0 "show --json"
expect_golden devices/show-ckpt-mixed-numa.jsonl "show --json mixed numa"

# A changed checksum: exit 1 with the kubelet's text, file untouched.
sed 's/"Checksum":586261819/"Checksum":586261818/' "$D/ckpt-one-gpu.json" >"$TMPD/bad"
run checkpoint verify "$TMPD/bad"
expect_rc 1 "verify corrupted"
expect_err_contains "checkpoint is corrupted" "verify corrupted"
run checkpoint rewrite "$TMPD/bad"
expect_rc 1 "rewrite corrupted without --fix-checksum"
cmp -s "$TMPD/bad" "$TMPD/bad" || fail "rewrite touched the file"
run checkpoint rewrite "$TMPD/bad" --fix-checksum --output "$TMPD/fixed"
expect_rc 0 "rewrite --fix-checksum"
cmp -s "$TMPD/fixed" "$D/ckpt-one-gpu.json" || fail "fixed file differs from the kubelet's bytes"

# A canonical file is left as it is; --drop removes a drained pod's entries.
cp "$D/ckpt-one-gpu.json" "$TMPD/one"
run checkpoint rewrite "$TMPD/one"
expect_rc 0 "rewrite canonical"
case "$OUT" in *"left as it is"*) ;; *) fail "rewrite canonical: [$OUT]" ;; esac
run checkpoint rewrite "$TMPD/one" --drop 2a5f6c1e-0d6b-4c1a-9a55-7d0b3e9c1f00
expect_rc 0 "rewrite --drop"
run checkpoint verify "$TMPD/one"
expect_rc 0 "verify after --drop"
case "$OUT" in *"0 entries"*) ;; *) fail "after --drop: [$OUT]" ;; esac
run checkpoint rewrite "$TMPD/one" --drop no-such-pod
expect_rc 2 "rewrite --drop unknown pod"

# CPU-manager options make no sense here; garbage is not a checkpoint.
run checkpoint verify "$D/ckpt-one-gpu.json" --reserved 0
expect_rc 2 "verify --reserved on a device checkpoint"
expect_err_contains "apply to cpu_manager_state files" "verify --reserved"
printf '{"Data":{"PodDeviceEntries":[{"PodUID":5}]},"Checksum":1}' >"$TMPD/types"
run checkpoint verify "$TMPD/types"
expect_rc 2 "wrong types"
expect_err_contains "$TMPD/types" "wrong types names the file"
printf '{"Data":{"PodDeviceEntries":[{"AllocResp":"!!"}]},"Checksum":1}' >"$TMPD/b64"
run checkpoint verify "$TMPD/b64"
expect_rc 2 "bad base64"
printf '{"Data":' >"$TMPD/trunc"
run checkpoint verify "$TMPD/trunc"
expect_rc 2 "truncated"
[ -z "$OUT" ] || fail "truncated: stdout not empty"

finish
