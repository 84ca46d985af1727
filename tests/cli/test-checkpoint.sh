# nodecm checkpoint verify|show|rewrite: exit codes 0/1/2, one-line errors, show goldens, and
# that only `rewrite` ever writes.
. "$(dirname "$0")/lib.sh"

cd "$DATA" || exit 1
CK=checkpoints
SYN8="package:1 core:4 pu:2"

# --- verify: every real file of the spec's Appendix A is valid -------------------------------
for f in $CK/real/0*.json $CK/real/10-none-empty-v1.json; do
        run checkpoint verify "$f"
        expect_rc 0 "verify $f"
        case "$OUT" in
        "$f: cpu_manager_state V"*": valid"*) ;;
        *) fail "verify $f: summary was [$OUT]" ;;
        esac
        [ "$(printf '%s\n' "$OUT" | wc -l)" -eq 1 ] || fail "verify $f: more than one line"
done

run checkpoint verify $CK/real/06-static-v1.34-two-pods.json
expect_out "$CK/real/06-static-v1.34-two-pods.json: cpu_manager_state V2, policy static, 2 pods, 2 containers, checksum 2764424633 verified (CPUManagerCheckpoint rendering): valid" \
        "verify summary"
run checkpoint verify $CK/crafted/v2-native.json
expect_rc 0 "verify native V2 rendering"
case "$OUT" in *"(CPUManagerCheckpointV2 rendering)"*) ;; *) fail "native rendering: [$OUT]" ;; esac
run checkpoint verify $CK/crafted/v2-zero-checksum.json
expect_rc 0 "verify checksum 0"
case "$OUT" in *"checksum 0 (accepted unverified)"*) ;; *) fail "checksum 0: [$OUT]" ;; esac
run checkpoint verify $CK/kubelet/v3-native.json
expect_rc 0 "verify V3"
run checkpoint verify $CK/crafted/case-insensitive-keys.json
expect_rc 0 "verify case-insensitive keys"

# --- verify: invalid files exit 1 with one line naming the file and the reason ---------------
run checkpoint verify $CK/kubelet/invalid-checksum.json
expect_rc 1 "checksum mismatch"
expect_err_contains "nodecm: $CK/kubelet/invalid-checksum.json: checkpoint is corrupted: checksum 1337 in the file, but its V2 content hashes to 354655845 (CPUManagerCheckpoint)" \
        "checksum mismatch"
expect_out "" "nothing on stdout on failure"
run checkpoint verify $CK/real/11-static-0-2019-unverifiable.json
expect_rc 1 "unverifiable 2019 file"
run checkpoint verify $CK/kubelet/unparsable-default-cpu-set.json
expect_rc 1 "bad default cpuset"
expect_err_contains 'could not parse default cpu set "1.3": strconv.Atoi: parsing "1.3": invalid syntax' \
        "bad default cpuset"
run checkpoint verify $CK/kubelet/unparsable-assignment-entry.json
expect_rc 1 "bad entry cpuset"
expect_err_contains 'could not parse cpuset "asd" for container "container2" in pod "pod"' "bad entry"
run checkpoint verify $CK/crafted/bad-type-policy.json
expect_rc 1 "wrong JSON type"
expect_err_contains "json: cannot unmarshal number into Go struct field CPUManagerCheckpoint.policyName of type string" \
        "wrong JSON type"
run checkpoint verify $CK/kubelet/invalid-policy-name.json --policy none
expect_rc 1 "policy mismatch"
expect_err_contains 'configured policy "none" differs from state checkpoint policy "other"' "policy"
run checkpoint verify $CK/kubelet/v3-legacy.json --policy static --kubelet-version 1.36
expect_rc 1 "V3 under a gate-off kubelet 1.36"
expect_err_contains "kubelet 1.36 refuses it with PodLevelResourceManagers off: json: cannot unmarshal object into Go struct field CPUManagerCheckpointV1.entries of type string" \
        "V3 gate off"
run checkpoint verify $CK/kubelet/v3-legacy.json --policy static --kubelet-version 1.35
expect_rc 1 "V3 under kubelet 1.35"
expect_err_contains "kubelet 1.35 refuses it with PodLevelResourceManagers off: checkpoint is corrupted" \
        "V3 under 1.35"
# 1.37 falls back to V3 whatever the gate, and drops the pod-level sets with it off.
run checkpoint verify $CK/kubelet/v3-legacy.json --policy static
expect_rc 0 "V3 under kubelet 1.37"
run checkpoint verify $CK/real/06-static-v1.34-two-pods.json --kubelet-version 1.31
expect_rc 2 "a release nodecm does not reproduce"
expect_err_contains "nodecm reproduces kubelet 1.32 and newer" "--kubelet-version 1.31"

# --- verify: V4, the 1.37 layout (V2 fields for older kubelets, then data and dataChecksum) -----
V4=$CK/v4
run checkpoint verify $V4/dual-valid.json --policy static
expect_out "$V4/dual-valid.json: cpu_manager_state V4, policy static, 1 pod, 2 containers, dataChecksum 738276254 verified, V2 part checksum 964019483 verified (CPUManagerCheckpoint rendering): valid" \
        "verify V4"
run checkpoint verify $V4/dual-valid.json --policy static --kubelet-version 1.35
expect_rc 0 "V4 under 1.35"
case "$OUT" in *"read as V2 by kubelet 1.35: valid") ;; *) fail "V4 under 1.35: [$OUT]" ;; esac
# each release goes by its own part
run checkpoint verify $V4/dual-v2-part-corrupted.json --policy static
expect_rc 0 "V2 part corrupted: 1.37 reads data"
case "$OUT" in *"so kubelets up to 1.36 refuse the file: valid") ;; *) fail "V2 part corrupted: [$OUT]" ;; esac
run checkpoint verify $V4/dual-v2-part-corrupted.json --policy static --kubelet-version 1.36
expect_rc 1 "V2 part corrupted: 1.36 refuses"
expect_err_contains "kubelet 1.36 refuses it: json: cannot unmarshal object into Go struct field CPUManagerCheckpointV1.entries of type string" \
        "V2 part corrupted under 1.36"
run checkpoint verify $V4/dual-no-data.json --policy static
expect_rc 1 "V4 without data"
expect_err_contains "checkpoint is corrupted: its data does not decode: unexpected end of JSON input" \
        "V4 without data"
run checkpoint verify $V4/dual-no-data.json --policy static --kubelet-version 1.36
expect_rc 0 "V4 without data read by 1.36"
case "$OUT" in *"(1.37 refuses it: checkpoint is corrupted: its data does not decode"*) ;; *) fail "1.36 note: [$OUT]" ;; esac
run checkpoint verify $V4/data-invalid-checksum.json
expect_rc 1 "V4 dataChecksum mismatch"
expect_err_contains "checkpoint is corrupted: dataChecksum 1234 in the file, but its data hashes to 657950972" \
        "V4 dataChecksum mismatch"
run checkpoint verify $V4/dual-outer-type-error.json --policy static
expect_rc 1 "V4 outer type error"
expect_err_contains "kubelet 1.37 refuses it: could not load v4 checkpoint: failed to deserialize cpu manager checkpoint: json: cannot unmarshal string into Go struct field CPUManagerCheckpoint.entries of type map[string]string" \
        "V4 outer type error"
run checkpoint verify $V4/dual-baseline-not-held.json --policy static
expect_rc 1 "baseline not held"
expect_err_contains 'baselines: cpuset "1-2" of container "container1" in pod "pod" is not part of its CPUs "4-6"' \
        "baseline not held"

# --- verify against a machine: the kubelet's start-up validation ----------------------------
run checkpoint verify $CK/crafted/static-8cpus.json --synthetic "$SYN8" --reserved 0
expect_rc 0 "validation passes"
case "$OUT" in *"start-up validation passes on --synthetic $SYN8"*) ;; *) fail "passes: [$OUT]" ;; esac
run checkpoint verify $CK/crafted/static-8cpus.json --synthetic "package:1 core:6 pu:2"
expect_rc 1 "CPUs added"
expect_err_contains "the kubelet would refuse to start on --synthetic package:1 core:6 pu:2: current set of available CPUs \"0-11\" doesn't match with CPUs in state \"0-7\"" \
        "CPUs added"
run checkpoint verify $CK/crafted/static-8cpus.json --synthetic "$SYN8" --reserved 0 --strict
expect_rc 1 "strict reservation turned on"
expect_err_contains 'some of strictly reserved cpus: "0" are present in defaultCpuSet: "0-1,4-7"' "strict"
run checkpoint verify $CK/crafted/static-8cpus.json --synthetic "$SYN8" --reserved 2
expect_rc 1 "reserved CPU held by a container"
expect_err_contains 'not all reserved cpus: "2" are present in defaultCpuSet: "0-1,4-7"' "reserved"
run checkpoint verify $CK/real/02-static-0-63.json --synthetic "package:2 core:16 pu:2" --reserved 0-1
expect_rc 0 "blog file on a 64-CPU machine"
run checkpoint verify $CK/real/01-none-empty.json --synthetic "$SYN8"
expect_rc 0 "none policy"
case "$OUT" in *'policy "none" has no start-up validation'*) ;; *) fail "none: [$OUT]" ;; esac
run checkpoint verify $CK/kubelet/v1-migration-static.json --synthetic "$SYN8"
expect_rc 1 "V1 without its containers"
expect_err_contains "failed to migrate checkpoint from v1 to v2: containerID 'containerID1' not found in initial containers list" \
        "V1 migration"
run checkpoint verify $CK/kubelet/v1-migration-static.json --policy static \
        --container containerID1=pod/container1 --container containerID2=pod/container2
expect_rc 0 "V1 migrated and validated"

# --- exit 2: unreadable, not JSON, unknown kind, bad usage -----------------------------------
run checkpoint verify $CK/does-not-exist.json
expect_rc 2 "missing file"
expect_err_contains "does-not-exist.json" "missing file"
run checkpoint verify $CK/crafted/not-json.txt
expect_rc 2 "not JSON"
expect_err_contains "$CK/crafted/not-json.txt:1:1: invalid JSON" "not JSON"
run checkpoint verify $CK/crafted/truncated.json
expect_rc 2 "truncated"
expect_err_contains "unexpected end of JSON input" "truncated"
run checkpoint verify $CK/crafted/foreign-device.json
expect_rc 0 "a device checkpoint is recognised by its content"
case "$OUT" in *kubelet_internal_checkpoint*) ;; *) fail "device checkpoint: [$OUT]" ;; esac
run checkpoint verify $CK/crafted/foreign-other.json
expect_err_contains "not a checkpoint file nodecm knows" "foreign"
run checkpoint verify $CK/crafted/foreign-other.json
expect_rc 2 "unknown kind"
run checkpoint verify
expect_rc 2 "no file"
expect_err_contains "missing FILE" "no file"
run checkpoint verify a b
expect_rc 2 "two files"
run checkpoint verify $CK/real/01-none-empty.json --json
expect_rc 2 "option of another subcommand"
run checkpoint verify $CK/real/01-none-empty.json --reserved x
expect_rc 2 "bad --reserved"
expect_err_contains "--reserved 'x'" "bad --reserved"
run checkpoint verify $CK/real/01-none-empty.json --container nope
expect_rc 2 "bad --container"
run checkpoint verify $CK/real/01-none-empty.json --synthetic "$SYN8" --fsroot /
expect_rc 2 "two sources"
run checkpoint frobnicate
expect_rc 2 "unknown subcommand"
run checkpoint
expect_rc 2 "no subcommand"

# --- help ------------------------------------------------------------------------------------
for sub in "" verify show rewrite; do
        # shellcheck disable=SC2086
        run checkpoint $sub --help
        expect_rc 0 "checkpoint $sub --help"
        case "$OUT" in "Usage: nodecm checkpoint"*) ;; *) fail "help $sub: [$OUT]" ;; esac
done

# --- show: goldens ---------------------------------------------------------------------------
run checkpoint show $CK/real/06-static-v1.34-two-pods.json --reserved 0-1
expect_rc 0 "show"
expect_golden $CK/golden/show-v2.txt "show V2"
run checkpoint show --json $CK/real/06-static-v1.34-two-pods.json --reserved 0-1
expect_rc 0 "show --json"
expect_golden $CK/golden/show-v2.json "show V2 --json"
run checkpoint show $CK/kubelet/v1-migration.json
expect_golden $CK/golden/show-v1.txt "show V1"
run checkpoint show $CK/kubelet/v3-legacy.json
expect_golden $CK/golden/show-v3.txt "show V3"
run checkpoint show $CK/kubelet/v3-legacy.json --json
expect_golden $CK/golden/show-v3.json "show V3 --json"
# A file that fails verification is shown with the reason.
run checkpoint show $CK/kubelet/invalid-checksum.json
expect_rc 0 "show corrupt"
expect_golden $CK/golden/show-corrupt.txt "show corrupt"
run checkpoint show $CK/kubelet/unparsable-assignment-entry.json --json
expect_golden $CK/golden/show-bad-cpuset.json "show bad cpuset --json"
run checkpoint show $CK/crafted/empty-pod.json
expect_golden $CK/golden/show-empty-pod.txt "show empty pod"
run checkpoint show $CK/kubelet/v3-legacy.json --kubelet-version 1.36
expect_golden $CK/golden/show-v3-1.36.txt "show V3 as 1.36"
run checkpoint show $V4/dual-baselines.json
expect_rc 0 "show V4"
expect_golden $CK/golden/show-v4.txt "show V4"
run checkpoint show $V4/dual-baselines.json --json
expect_golden $CK/golden/show-v4.json "show V4 --json"
run checkpoint show $V4/dual-v2-part-differs.json --kubelet-version 1.36
expect_golden $CK/golden/show-v4-differs-1.36.txt "show V4, V2 part differs, as 1.36"
run checkpoint show $V4/dual-invalid-data-json.json --json
expect_rc 0 "show V4 whose data does not decode"
expect_golden $CK/golden/show-v4-bad-data.json "show V4 bad data --json"
run checkpoint show $CK/crafted/bad-type-policy.json
expect_rc 1 "show undecodable"
run checkpoint show $CK/crafted/not-json.txt
expect_rc 2 "show not JSON"
run checkpoint show $CK/real/01-none-empty.json --strict
expect_rc 2 "show --strict"

# --- only rewrite writes ---------------------------------------------------------------------
snap() { cksum "$1"; stat -c '%i %Y' "$1"; }
cp $CK/kubelet/invalid-checksum.json "$TMPD/corrupt.json"
before=$(snap "$TMPD/corrupt.json")
run checkpoint verify "$TMPD/corrupt.json" --synthetic "$SYN8"
run checkpoint show "$TMPD/corrupt.json"
run checkpoint rewrite "$TMPD/corrupt.json"
expect_rc 1 "rewrite refuses a corrupt file"
expect_err_contains "--fix-checksum" "rewrite hint"
[ "$(snap "$TMPD/corrupt.json")" = "$before" ] || fail "verify/show/rewrite modified a corrupt file"

run checkpoint rewrite "$TMPD/corrupt.json" --fix-checksum
expect_rc 0 "rewrite --fix-checksum"
expect_out "$TMPD/corrupt.json: written as cpu_manager_state V2 with checksum 354655845, checksum recomputed (from $TMPD/corrupt.json V2)" \
        "rewrite --fix-checksum"
run checkpoint verify "$TMPD/corrupt.json"
expect_rc 0 "fixed file verifies"
[ "$(cat "$TMPD/corrupt.json")" = '{"policyName":"none","defaultCpuSet":"4-6","checksum":354655845}' ] ||
        fail "fixed file content: $(cat "$TMPD/corrupt.json")"

# A file already in the kubelet's form is left alone, inode and all.
cp $CK/real/06-static-v1.34-two-pods.json "$TMPD/real.json"
before=$(snap "$TMPD/real.json")
run checkpoint rewrite "$TMPD/real.json"
expect_rc 0 "rewrite canonical"
case "$OUT" in *"already in the kubelet's form"*) ;; *) fail "rewrite canonical: [$OUT]" ;; esac
[ "$(snap "$TMPD/real.json")" = "$before" ] || fail "rewrite touched a canonical file"

# Pretty-printed, case-folded keys, non-canonical cpusets: rewritten byte for byte as the kubelet.
run checkpoint rewrite $CK/crafted/case-insensitive-keys.json --output "$TMPD/out.json"
expect_rc 0 "rewrite --output"
cmp -s "$TMPD/out.json" $CK/real/06-static-v1.34-two-pods.json || fail "rewrite is not the kubelet's bytes"
run checkpoint rewrite $CK/kubelet/v1-migration.json --output "$TMPD/v1.json" \
        --container containerID1=pod/container1 --container containerID2=pod/container2
expect_rc 0 "rewrite V1"
[ "$(cat "$TMPD/v1.json")" = '{"policyName":"none","defaultCpuSet":"1-3","entries":{"pod":{"container1":"4-6","container2":"1-3"}},"checksum":3610638499}' ] ||
        fail "V1 migrated: $(cat "$TMPD/v1.json")"
run checkpoint rewrite $CK/kubelet/v1-migration.json --output "$TMPD/v1b.json"
expect_rc 1 "rewrite V1 without containers"
[ ! -e "$TMPD/v1b.json" ] || fail "failed rewrite left a file"
run checkpoint rewrite $CK/kubelet/v3-legacy.json --output "$TMPD/v3.json"
expect_rc 1 "rewrite V3"

# --- rewrite: V4 --------------------------------------------------------------------------------
# A V2 file stays V2 unless asked; --kubelet-version 1.37 writes the kubelet's V4 bytes.
run checkpoint rewrite $CK/real/06-static-v1.34-two-pods.json --output "$TMPD/v4.json" --kubelet-version 1.37
expect_rc 0 "rewrite as 1.37"
expect_out "$TMPD/v4.json: written as cpu_manager_state V4 with dataChecksum 2594768180 (from $CK/real/06-static-v1.34-two-pods.json V2)" \
        "rewrite as 1.37"
real=$(cat $CK/real/06-static-v1.34-two-pods.json)
case "$(cat "$TMPD/v4.json")" in "${real%\}}"',"data":"{\"policyName\":'*',"dataChecksum":2594768180}') ;;
*) fail "V4 is not the V2 part then data: $(cat "$TMPD/v4.json")" ;; esac
before=$(snap "$TMPD/v4.json")
run checkpoint rewrite "$TMPD/v4.json"
expect_rc 0 "V4 left as it is"
expect_out "$TMPD/v4.json: already in the kubelet's form (V4, dataChecksum 2594768180), left as it is" \
        "V4 left as it is"
[ "$(snap "$TMPD/v4.json")" = "$before" ] || fail "rewrite touched a canonical V4 file"
# and back to what 1.36 writes, the real file
run checkpoint rewrite "$TMPD/v4.json" --kubelet-version 1.36
expect_rc 0 "rewrite V4 as 1.36"
cmp -s "$TMPD/v4.json" $CK/real/06-static-v1.34-two-pods.json || fail "V4 -> 1.36 is not the real file"
# the dual layout of the kubelet's table, rewritten byte for byte as nodecm writes it
run checkpoint rewrite $V4/dual-baselines.json --output "$TMPD/b.json"
expect_rc 0 "rewrite V4 with baselines"
cmp -s "$TMPD/b.json" $V4/dual-baselines.json || fail "V4 with baselines: $(cat "$TMPD/b.json")"
# 1.36 reads a V4 file's V2 part, which has no place for baselines: rewritten as 1.36, they go
run checkpoint rewrite $V4/dual-baselines.json --output "$TMPD/p.json" --kubelet-version 1.36
[ "$(cat "$TMPD/p.json")" = '{"policyName":"static","defaultCpuSet":"7-9","entries":{"pod":{"container1":"4-6","container2":"1-3"}},"checksum":964019483}' ] ||
        fail "V4 as 1.36: $(cat "$TMPD/p.json")"
# nodecm's promised member of a V2 file becomes the baseline of V4, and back
run checkpoint rewrite $CK/golden/write-v2-promised.json --output "$TMPD/q.json" --kubelet-version 1.37
cmp -s "$TMPD/q.json" $CK/golden/write-v4-baselines.json || fail "promised -> baselines: $(cat "$TMPD/q.json")"
run checkpoint rewrite "$TMPD/q.json" --output "$TMPD/r.json" --kubelet-version 1.37
cmp -s "$TMPD/r.json" $CK/golden/write-v4-baselines.json || fail "V4 with baselines kept"
# a V2 part that fails its checksum is repaired when data verifies
run checkpoint rewrite $V4/dual-v2-part-corrupted.json --output "$TMPD/c.json"
expect_rc 0 "rewrite repairs the V2 part"
cmp -s "$TMPD/c.json" $V4/dual-valid.json || fail "repaired V2 part: $(cat "$TMPD/c.json")"
run checkpoint rewrite $V4/data-invalid-checksum.json --output "$TMPD/d.json"
expect_rc 1 "rewrite refuses a V4 dataChecksum mismatch"
expect_err_contains "--fix-checksum" "V4 rewrite hint"
run checkpoint rewrite $V4/data-invalid-checksum.json --output "$TMPD/d.json" --fix-checksum
expect_rc 0 "V4 --fix-checksum"
run checkpoint rewrite $V4/dual-invalid-data-json.json --output "$TMPD/e.json" --fix-checksum
expect_rc 1 "V4 whose data does not decode: nothing to take"
expect_err_contains "its data does not decode (unexpected end of JSON input)" "nothing to take"
run checkpoint rewrite $CK/real/01-none-empty.json --output /nonexistent-dir/x
expect_rc 2 "rewrite to an unwritable place"

# --- rewrite --fit / --drop: repair for a machine, without a drain -----------------------------
cp $CK/crafted/static-8cpus.json "$TMPD/fit.json"
run checkpoint verify "$TMPD/fit.json" --synthetic "package:1 core:6 pu:2"
expect_rc 1 "CPUs added: the kubelet refuses"
run checkpoint rewrite "$TMPD/fit.json" --fit --synthetic "package:1 core:6 pu:2"
expect_rc 0 "rewrite --fit"
expect_out "$TMPD/fit.json: written as cpu_manager_state V2 with checksum 334741567 (from $TMPD/fit.json V2); shared pool 0-1,4-7 -> 0-1,4-11 to fit --synthetic package:1 core:6 pu:2" \
        "rewrite --fit"
run checkpoint verify "$TMPD/fit.json" --synthetic "package:1 core:6 pu:2"
expect_rc 0 "fitted file passes the start-up validation"
run checkpoint rewrite "$TMPD/fit.json" --fit --synthetic "package:1 core:6 pu:2"
expect_rc 0 "fit again"
case "$OUT" in *"left as it is"*) ;; *) fail "fit again: [$OUT]" ;; esac
cp $CK/crafted/static-8cpus.json "$TMPD/fit2.json"
before=$(snap "$TMPD/fit2.json")
run checkpoint rewrite "$TMPD/fit2.json" --fit --synthetic "package:1 core:1 pu:2"
expect_rc 1 "fit refuses a container on vanished CPUs"
expect_err_contains 'pod: pod-a, container: app cpuset: "2-3" holds CPUs "2-3" that are not on this machine; drain that pod first' \
        "fit refusal"
[ "$(snap "$TMPD/fit2.json")" = "$before" ] || fail "refused fit modified the file"
run checkpoint rewrite "$TMPD/fit2.json" --fit --synthetic "package:1 core:1 pu:2" --drop pod-a
expect_rc 0 "fit after dropping the drained pod"
[ "$(cat "$TMPD/fit2.json")" = '{"policyName":"static","defaultCpuSet":"0-1","checksum":1636926438}' ] ||
        fail "dropped and fitted: $(cat "$TMPD/fit2.json")"
run checkpoint rewrite "$TMPD/fit2.json" --drop nope
expect_rc 2 "drop an unknown pod"
run checkpoint rewrite $CK/crafted/static-8cpus.json --synthetic "$SYN8" --output "$TMPD/x.json"
expect_rc 2 "machine without --fit"
run checkpoint rewrite $CK/real/01-none-empty.json --fit --synthetic "$SYN8" --output "$TMPD/x.json"
expect_rc 1 "fit a none-policy file"


# Two pods holding the same CPU: valid for the kubelet, and said on stderr.
printf '{"policyName":"static","defaultCpuSet":"0,4-7","entries":{"a":{"x":"1-2"},"b":{"y":"2-3"}},"checksum":0}' >"$TMPD/overlap.json"
run checkpoint verify "$TMPD/overlap.json"
expect_rc 0 "overlapping assignments verify"
expect_err_contains "warning: $TMPD/overlap.json: CPUs 2 are held by both a/x and b/y (two pods share exclusive CPUs" \
        "overlapping assignments warn"

# A rewrite keeps the file's mode; a new file is 0600 (the kubelet's file store).
cp "$TMPD/overlap.json" "$TMPD/mode.json"
chmod 640 "$TMPD/mode.json"
run checkpoint rewrite "$TMPD/mode.json"
expect_rc 0 "rewrite in place"
[ "$(stat -c %a "$TMPD/mode.json")" = 640 ] || fail "rewrite changed the mode"
run checkpoint rewrite "$TMPD/mode.json" --output "$TMPD/new.json"
[ "$(stat -c %a "$TMPD/new.json")" = 600 ] || fail "a new checkpoint is not 0600"

finish
