# nodecm merge: goldens for each policy, both merges, stdin and YAML, exit statuses, bad input.
. "$(dirname "$0")/lib.sh"

M="$DATA/merge"

run merge --help
expect_rc 0 "--help"
case "$OUT" in *"Usage: nodecm merge"*) ;; *) fail "--help: no usage text" ;; esac

run merge
expect_rc 2 "no FILE"
expect_err_contains "missing FILE" "no FILE"

run merge "$M/none.json" extra
expect_rc 2 "two files"
run merge --fast "$M/none.json"
expect_rc 2 "unknown option"
expect_err_contains "unknown option '--fast'" "unknown option"

# Goldens, with the fast merge and with kubelet's walk: same bytes.
for name in design-example closest no-common-mask single-numa-node cannot-satisfy none; do
        f="$M/$name.json"
        [ -f "$f" ] || f="$M/$name.yaml"
        for ref in "" --reference; do
                run merge $ref "$f"
                case "$name" in
                no-common-mask)
                        expect_rc 1 "$name $ref"
                        expect_err_contains "TopologyAffinityError: Resources cannot be allocated with Topology locality" "$name $ref"
                        ;;
                *) expect_rc 0 "$name $ref" ;;
                esac
                expect_golden "merge/$name.out" "$name $ref"
        done
done

# Standard input.
"$NODECM" merge - <"$M/design-example.json" >"$TMPD/out" 2>"$TMPD/err"
RC=$?
OUT=$(cat "$TMPD/out")
expect_rc 0 "stdin"
expect_out '{"numa": [0], "preferred": true, "admit": true}' "stdin"

# Without prefer-closest-numa-nodes the lower mask wins.
sed 's/"true"/"false"/' "$M/closest.yaml" >"$TMPD/narrowest.yaml"
run merge "$TMPD/narrowest.yaml"
expect_rc 0 "narrowest"
expect_out '{"numa": [2, 3], "preferred": true, "admit": true}' "narrowest"

# max-allowable-numa-nodes raises the 8-node limit.
cat >"$TMPD/nine.json" <<'EOF'
{"policy": "single-numa-node", "options": {"max-allowable-numa-nodes": "9"},
 "numa": [0, 1, 2, 3, 4, 5, 6, 7, 8],
 "providers": [{"cpu": [{"numa": [8], "preferred": true}]}]}
EOF
run merge "$TMPD/nine.json"
expect_rc 0 "nine nodes allowed"
expect_out '{"numa": [8], "preferred": true, "admit": true}' "nine nodes allowed"

# bad_input NAME JSON MESSAGE: exit 2, one line naming the field.
bad_input() {
        printf '%s\n' "$2" >"$TMPD/bad.json"
        run merge "$TMPD/bad.json"
        expect_rc 2 "$1"
        expect_err_contains "$3" "$1"
        [ -z "$OUT" ] || fail "$1: stdout not empty: $OUT"
}

bad_input "unknown policy" '{"policy": "fast", "numa": [0]}' \
        'bad.json: policy: unknown policy: "fast"'
bad_input "policy missing" '{"numa": [0]}' 'policy: missing'
bad_input "policy type" '{"policy": 1, "numa": [0]}' 'policy: expected string, got number'
bad_input "unknown option" '{"policy": "restricted", "options": {"fancy": "true"}, "numa": [0]}' \
        'options: unknown Topology Manager Policy option: "fancy"'
bad_input "option value" '{"policy": "restricted", "options": {"prefer-closest-numa-nodes": "yes"}, "numa": [0]}' \
        'options: bad value for option "prefer-closest-numa-nodes": strconv.ParseBool: parsing "yes": invalid syntax'
bad_input "option type" '{"policy": "restricted", "options": {"prefer-closest-numa-nodes": true}, "numa": [0]}' \
        'options.prefer-closest-numa-nodes: expected string, got boolean'
bad_input "max-allowable too small" '{"policy": "restricted", "options": {"max-allowable-numa-nodes": "4"}, "numa": [0]}' \
        'options: the minimum value of "max-allowable-numa-nodes" should not be less than 8'
bad_input "too many nodes" '{"policy": "best-effort", "numa": [0, 1, 2, 3, 4, 5, 6, 7, 8]}' \
        'numa: unsupported on machines with more than 8 NUMA Nodes'
bad_input "numa missing" '{"policy": "best-effort"}' 'numa: missing'
bad_input "numa id 64" '{"policy": "best-effort", "numa": [0, 64]}' \
        'numa[1]: bit number must be in range 0-63'
bad_input "numa id negative" '{"policy": "best-effort", "numa": [-1]}' \
        'numa[0]: bit number must be in range 0-63'
bad_input "numa id type" '{"policy": "best-effort", "numa": ["0"]}' \
        'numa[0]: expected an integer, got string'
bad_input "numa twice" '{"policy": "best-effort", "numa": [1, 1]}' \
        'numa[1]: NUMA node 1 listed twice'
bad_input "hint id 64" '{"policy": "best-effort", "numa": [0], "providers": [{"cpu": [{"numa": [64], "preferred": true}]}]}' \
        'providers[0].cpu[0].numa[0]: bit number must be in range 0-63'
bad_input "hint preferred type" '{"policy": "best-effort", "numa": [0], "providers": [{"cpu": [{"numa": [0], "preferred": "yes"}]}]}' \
        'providers[0].cpu[0].preferred: expected boolean, got string'
bad_input "hint unknown field" '{"policy": "best-effort", "numa": [0], "providers": [{"cpu": [{"nodes": [0]}]}]}' \
        'providers[0].cpu[0].nodes: unknown field'
bad_input "hint not an object" '{"policy": "best-effort", "numa": [0], "providers": [{"cpu": [[0]]}]}' \
        'providers[0].cpu[0]: expected object, got array'
bad_input "resource not a list" '{"policy": "best-effort", "numa": [0], "providers": [{"cpu": {"numa": [0]}}]}' \
        'providers[0].cpu: expected array, got object'
bad_input "provider not an object" '{"policy": "best-effort", "numa": [0], "providers": [[]]}' \
        'providers[0]: expected object, got array'
bad_input "providers not a list" '{"policy": "best-effort", "numa": [0], "providers": {}}' \
        'providers: expected array, got object'
bad_input "unknown field" '{"policy": "best-effort", "numa": [0], "hints": []}' \
        'hints: unknown field'
bad_input "distances missing" '{"policy": "best-effort", "options": {"prefer-closest-numa-nodes": "true"}, "numa": [0, 1]}' \
        'distances: cannot discover NUMA topology: error getting NUMA distances from cadvisor'
bad_input "distances row length" '{"policy": "best-effort", "numa": [0, 1], "distances": {"0": [10, 11], "1": [10]}}' \
        'distances.1: expected 2 distances (one per NUMA node, in the order of numa), got 1'
bad_input "distances node missing" '{"policy": "best-effort", "numa": [0, 1], "distances": {"0": [10, 11]}}' \
        'distances: no entry for NUMA node 1'
bad_input "distances extra node" '{"policy": "best-effort", "numa": [0], "distances": {"0": [10], "2": [10]}}' \
        'distances.2: not a NUMA node listed in numa'
bad_input "distances negative" '{"policy": "best-effort", "numa": [0], "distances": {"0": [-10]}}' \
        'distances.0[0]: -10 is out of range'
bad_input "not an object" '[1, 2]' 'document: expected object, got array'
bad_input "syntax" '{"policy": ' 'bad.json:'

run merge "$TMPD/does-not-exist.json"
expect_rc 2 "missing file"

finish
