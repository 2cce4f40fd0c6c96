#!/usr/bin/env bash
# The built-in conversation's speech (libs/audio/speech/*.wav), made with Debian's espeak-ng
# (apt-get install espeak-ng): American English, 165 words per minute, 22,050 Hz mono PCM16 as
# espeak-ng writes it. The loader mixes and resamples to each session's input rate. The files are
# committed; run this only to make them again.
#
#   tools/make-speech.sh [OUT_DIR=libs/audio/speech]
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-libs/audio/speech}
mkdir -p "$OUT"
say() { espeak-ng -v en-us -s 165 -w "$OUT/$1.wav" "$2"; }
say q1 'What is the weather like in Paris today?'
say q2 'Tell me a short story about a lighthouse keeper.'
say stop 'Wait, stop, please.'
say q3a 'I would like to book a table'
say q3b 'for two people tomorrow evening.'
say mhm 'Mm-hm.'
# What the model mocks answer with, cut to --answer-ms.
say answer 'Sure. Here is what I found. The weather in Paris is mild today, with a light breeze.'
espeak-ng --version | head -1
