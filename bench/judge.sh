#!/usr/bin/env bash
# Benchmark of issue 3/7: `git sage judge` against a local OpenAI-compatible server that answers
# after 200 ms, on a 100-turn session. Prints wall time against the ideal ceil(100/jobs) x 0.2 s
# (efficiency target >= 0.85 at --jobs 8), the requests of a second run (target 0), total input
# tokens, and the share of each request that is a byte-identical prefix of the next (>= 0.9).
# SESSION_LANG=ru or zh writes the session in Russian or Chinese (the prompts follow it);
# BIN=path uses that binary instead of building the release one.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${BENCH_OUT:-$root/bench/out}
mkdir -p "$out"
jobs=${JOBS:-8}
turns=${TURNS:-100}
delay=0.2
port=${PORT:-18931}

lang=${SESSION_LANG:-en}
if [ -n "${BIN:-}" ]; then
  bin=$BIN
else
  cargo build --release --locked -q
  bin=$root/target/release/git-sage
fi

session=$out/judge-session.yaml
python3 - "$turns" "$lang" > "$session" <<'PY'
import sys
n, lang = int(sys.argv[1]), sys.argv[2]
task, step = {
    "en": ("Fix the SSRF in the product photo download.",
           "Step {i}: looking at fetcher.py and the download path again; nothing changes the scheme check."),
    "ru": ("Исправь SSRF в загрузке фото товара.",
           "Шаг {i}: снова смотрю fetcher.py и путь загрузки; проверку схемы ничто не меняет."),
    "zh": ("修复商品图片下载中的 SSRF。",
           "第 {i} 步：再次查看 fetcher.py 和下载路径；没有任何改动影响协议检查。"),
}[lang]
print(f"schema: sage.session/1\ntask: \"{task}\"\nturns:")
for i in range(1, n + 1):
    print(f"  - text: \"{step.format(i=i)}\"")
    print(f"    tool_calls:\n      - {{name: Bash, arguments: {{command: \"grep -n fetch media/fetcher.py\"}}, result: \"{i}: def download_preview(url)\"}}")
PY

log=$out/judge-requests.jsonl
rm -f "$log"
python3 bench/mock_openai.py "$port" "$delay" "$log" &
server=$!
trap 'kill $server 2>/dev/null' EXIT
for _ in $(seq 50); do
  python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.2)" 2>/dev/null && break
  sleep 0.1
done

cache=$(mktemp -d)
run() {
  XDG_CACHE_HOME=$cache OPENAI_BASE_URL=http://127.0.0.1:$port/v1 OPENAI_API_KEY=bench \
    "$bin" judge "$session" --judge openai:bench --jobs "$jobs" --format json -q --out "$1" >/dev/null
}
start=$(date +%s.%N)
run "$out/judge-scores.json"
end=$(date +%s.%N)
first=$(wc -l < "$log")
run "$out/judge-scores-2.json"
second=$(( $(wc -l < "$log") - first ))

python3 - "$start" "$end" "$turns" "$jobs" "$delay" "$first" "$second" "$log" "$out/judge-scores.json" <<'PY'
import json, math, sys
start, end, turns, jobs, delay = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
first, second = int(sys.argv[6]), int(sys.argv[7])
reqs = [json.loads(l) for l in open(sys.argv[8])][:first]
scores = json.load(open(sys.argv[9]))
wall = end - start
ideal = math.ceil(turns / jobs) * delay
by_turn = {r["turn"]: r["prompt"] for r in reqs}
shares = []
for t in sorted(by_turn)[:-1]:
    a, b = by_turn[t], by_turn.get(t + 1)
    if b is None:
        continue
    k = 0
    for x, y in zip(a, b):
        if x != y:
            break
        k += 1
    shares.append(k / len(a))
print(f"requests: {first} (turns {turns}, jobs {jobs})")
print(f"wall time: {wall:.2f} s, ideal ceil({turns}/{jobs}) x {delay} s = {ideal:.2f} s, efficiency {ideal / wall:.2f} (target >= 0.85)")
print(f"second run requests: {second} (target 0)")
print(f"total input tokens: {scores['judge']['input_tokens']}")
print(f"prompt language: {scores['judge'].get('lang')}")
print(f"prefix share (request t a byte-identical prefix of t+1): min {min(shares):.3f}, mean {sum(shares)/len(shares):.3f} (target >= 0.9)")
PY
