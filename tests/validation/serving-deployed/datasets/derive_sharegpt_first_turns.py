#!/usr/bin/env python3
"""Writes sharegpt-first-turns.csv from Sarathi-Serve's ShareGPT turn statistics.

Input: microsoft/sarathi-serve data/processed_traces/
sharegpt_8k_filtered_stats_llama2_tokenizer.csv (Apache-2.0; at commit
72339db5b120614033b317880ad3a05a5e4c9415), one row per conversation turn:
num_prefill_tokens (the whole history up to the turn's prompt) and
num_decode_tokens (the turn's reply), Llama 2 tokenizer, conversations in
order.

A turn starts a new conversation when its prefill is shorter than the
previous turn's prefill plus reply (a later turn's history holds both). The
first turns are the first prompt and first reply of each conversation, the
pair vLLM's ShareGPT benchmarks send; vLLM's filter then drops pairs with a
prompt or reply under 4 tokens, a prompt over 1024 or both over 2048 tokens
(benchmarks/benchmark_throughput.py, sample_requests).

Usage: derive_sharegpt_first_turns.py SARATHI_CSV > sharegpt-first-turns.csv
"""
import csv
import sys


def main(path):
    first = []
    previous_total = None
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            prefill = int(row["num_prefill_tokens"])
            decode = int(row["num_decode_tokens"])
            if previous_total is None or prefill < previous_total:
                first.append((prefill, decode))
            previous_total = prefill + decode
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["input_length", "output_length"])
    for prompt, reply in first:
        if prompt < 4 or reply < 4 or prompt > 1024 or prompt + reply > 2048:
            continue
        out.writerow([prompt, reply])


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: derive_sharegpt_first_turns.py SARATHI_CSV > sharegpt-first-turns.csv")
    main(sys.argv[1])
