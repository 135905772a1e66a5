#!/usr/bin/env bash
# The GPU measurements, on one box with 16 cores and one GPU (docs/performance.md#the-gpu-path):
#   0. the engine on every core at once (bench_env.py --all-cores): what training there is a fraction of;
#   1. the learner's rows/s on the GPU and on the box's cores, at the GPU configs' sizes (bench_train.py --only learner);
#   2. all-in 5v5 training with tune_configs/five_5v5_gpu.yaml for TRAIN_S seconds (agent steps/s per iteration), and
#      all-in 1v1 with tune_configs/hok_1v1_top_rung.yaml on 14 runners, the learner on the GPU (staleness 1);
#   3. one update of the 5v5 learner on the GPU, phase by phase, and its trace (profile_training.py --no-sampler);
#   4. the learning curve of the kickstarted 1v1 with tune_configs/hok_1v1_gpu.yaml for CURVE_MIN minutes
#      (bench_learning.py: the minute and agent step at which each ladder level was passed).
# nvidia-smi samples the GPU's utilization and memory every 0.5 s during each step (util_<step>.csv).
#
#     bash scripts/bench_gpu.sh [WORKDIR [STEP ...]]   # default results/gpu, every step; env: PY, TRAIN_S (100),
#                                                      # CURVE_MIN (4), TAR_TO
#
# The steps: engine, learner_gpu, learner_cpu, train_5v5, train_1v1, profile_5v5, curve_1v1.
#
# Every step runs under a timeout, in a session of its own (what a step cut short leaves, Ray's processes, is killed
# with its session), and the next one runs whatever the last did; each writes <step>.log in WORKDIR, and the runs' metrics.csv and opponents.csv land under
# WORKDIR/runs. With TAR_TO=FILE, WORKDIR is packed into FILE after every step.
set -u
W=${1:-results/gpu}
shift || true
STEPS=${*:-engine learner_gpu learner_cpu train_5v5 train_1v1 profile_5v5 curve_1v1}
PY=${PY:-python3}
TRAIN_S=${TRAIN_S:-100}
CURVE_MIN=${CURVE_MIN:-4}
export PYTHONUNBUFFERED=1
mkdir -p "$W"

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$W/gpu.csv" 2>&1
echo "cores $(nproc)" >> "$W/gpu.csv"
cat "$W/gpu.csv"

SMI=""
step() {  # step NAME SECONDS COMMAND...: runs COMMAND under a timeout, GPU sampled, output to NAME.log
    local name=$1 limit=$2 t0 rc
    shift 2
    case " $STEPS " in *" $name "*) ;; *) return 0 ;; esac
    echo "== $name ($(date +%T)): $*"
    nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader,nounits -lms 500 \
        > "$W/util_$name.csv" 2>/dev/null &
    SMI=$!
    t0=$(date +%s)
    # its own session, so that whatever a step cut short leaves behind (Ray's processes) can be ended without
    # touching any other process on the machine
    setsid timeout "$limit" "$@" > "$W/$name.log" 2>&1 &
    local pid=$!
    wait "$pid"
    rc=$?
    pkill -9 -s "$pid" 2>/dev/null
    kill "$SMI" 2>/dev/null
    echo "   exit $rc after $(( $(date +%s) - t0 )) s; GPU utilization mean/max (%):" \
        "$(awk -F', ' '{s+=$2; if ($2>m) m=$2; n++} END {if (n) printf "%.0f/%.0f over %d samples", s/n, m, n}' \
            "$W/util_$name.csv")"
    tail -n 4 "$W/$name.log"
    find "$W" \( -name "*.tfevents*" -o -name "checkpoint_*" \) -prune -exec rm -rf {} + 2>/dev/null
    if [ -n "${TAR_TO:-}" ]; then tar czf "$TAR_TO" -C "$(dirname "$W")" "$(basename "$W")"; fi
}

step engine 300 $PY scripts/bench_env.py --steps 2000 --all-cores
CONFIGS="tune_configs/hok_1v1_gpu.yaml tune_configs/five_5v5_gpu.yaml"
step learner_gpu 100 $PY scripts/bench_train.py --only learner --configs $CONFIGS \
    --set resources.num_gpus_per_learner=1
step learner_cpu 100 $PY scripts/bench_train.py --only learner --configs $CONFIGS \
    --set resources.num_gpus_per_learner=0
step train_5v5 $(( TRAIN_S + 60 )) $PY -m app.train --config tune_configs/five_5v5_gpu.yaml \
    --set stop.time_total_s="$TRAIN_S" --set evaluation.interval=0 --set trueskill.every=0 \
    --set checkpoint.frequency=0 --set storage_path="$W/runs"
step train_1v1 $(( TRAIN_S + 60 )) $PY -m app.train --config tune_configs/hok_1v1_top_rung.yaml \
    --set stop.time_total_s="$TRAIN_S" --set evaluation.interval=0 --set checkpoint.frequency=0 \
    --set resources.num_gpus_per_learner=1 --set resources.num_env_runners=14 --set ppo.staleness=1 \
    --set init.value_warmup_iterations=0 --set storage_path="$W/runs"
step profile_5v5 150 $PY scripts/profile_training.py --config tune_configs/five_5v5_gpu.yaml --no-sampler --games \
    --trace 20 --set resources.num_gpus_per_learner=1
step curve_1v1 "$(awk "BEGIN {print int($CURVE_MIN * 60 + 90)}")" $PY scripts/bench_learning.py --config tune_configs/hok_1v1_gpu.yaml \
    --minutes "$CURVE_MIN" --final-games 0 --lower-games 0 --set checkpoint.frequency=0 --set storage_path="$W/runs"
echo "== done ($(date +%T))"
