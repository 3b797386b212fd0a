#!/bin/bash
# The GPU machine's checks and figures, one `run` call: bash tools/device/run.sh STEP...
# (logs under $OUT). Prepare once per checkout (ignored paths, carried with
# carry: [".whl", ".gpu"]):
#   echo /.whl/ >> .git/info/exclude; echo /.gpu/ >> .git/info/exclude
#   mkdir -p .whl .gpu/before; cp ../shared/wheels/*.whl .whl/
#   cp -r ../shared/array-api-tests .gpu/aat; cp ../shared/tools/array-api-tests.sh .gpu/
#   git archive 0b18f6b^ mdarray benchmarks | tar -x -C .gpu/before  # issue 22's flat tree
# Steps: tests:<paths,comma-separated> (TESTS_T s), suite (SUITE_T s), aat (cuda
# conformance, AAT_T s), b25 (issue 25's rows), b25h200 (b25 only on an H200), wl,
# wl:<algorithm>, b22:<benchmark module> (flat tree and main alternated, ROUNDS times),
# counts (Python calls per workload iteration, as tests/test_iteration_costs.py counts),
# hostprof:<names> (where an iteration's host time goes: tools/device/hostprof.py).
# ab (an earlier tree and this one alternated: AB_DIR, AB_ONLY, ROUNDS),
# prim (host cost of CuPy's and mdarray's small calls: tools/device/primitives.py),
# pieces (the same at 64x64 and 2048x2048, launchers and reductions: tools/device/launch_pieces.py),
# itc:<names> (fixed and per-iteration cost of mdarray.iterate: tools/device/iterate_costs.py),
# chain (waits for the device, a power iteration's operations alone and in their chain:
# tools/device/chain_probe.py), lines[:<workloads>] (each line of an iteration in its chain,
# CuPy's and mdarray's, CG by default: tools/device/chain_lines.py), raw (the host cost of
# one launch by each way CuPy offers: tools/device/raw_launch.py), calls[:<workload>] (the
# Python calls of each line of an iteration: tools/device/line_calls.py), streams[:<workloads>]
# (what entering mdarray's stream costs a call and each line: tools/device/stream_probe.py),
# device[:<workloads>] (each line's device time: tools/device/line_device.py).
set -u
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD MDARRAY_BACKEND=cuda
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee $OUT/gpu.txt
python3 -c 'import cupy, numpy; print("cupy", cupy.__version__, "numpy", numpy.__version__)'
t0=$SECONDS
for step in "$@"; do
  echo "=== $step at $((SECONDS - t0)) s"
  case $step in
    tests:*)
      p=${step#tests:}
      timeout ${TESTS_T:-300} python3 -m pytest -p no:benchmark -p no:cacheprovider -n 14 -q -rf ${p//,/ } > $OUT/tests.log 2>&1
      grep -E "^(FAILED|ERROR)" $OUT/tests.log | head -30; tail -2 $OUT/tests.log ;;
    suite)
      timeout ${SUITE_T:-500} python3 -m pytest -p no:benchmark -p no:cacheprovider -n 14 -v -rf tests mdarray > $OUT/suite.log 2>&1
      echo "rc $?"; grep -c -E " PASSED " $OUT/suite.log; grep -E "^(FAILED|ERROR)| FAILED | ERROR " $OUT/suite.log | head -60; tail -2 $OUT/suite.log ;;
    aat)
      AAT_PYTHON=python3 AAT_JOBS=14 AAT_OUT=$OUT/aat AAT_TIMEOUT=${AAT_T:-400} bash .gpu/array-api-tests.sh .gpu/aat mdarray > $OUT/aat.log 2>&1
      tail -45 $OUT/aat.log ;;
    b25)
      python3 -m benchmarks.compute --only add fuse sum --json $OUT/b25c.json 2>&1 | tail -30
      python3 -m benchmarks.movement --only reshard --json $OUT/b25m.json 2>&1 | tail -12 ;;
    wl)
      python3 -m benchmarks.workloads --json $OUT/wl.json > $OUT/wl.log 2>&1; tail -60 $OUT/wl.log ;;
    wl:*)
      python3 -m benchmarks.workloads --only ${step#wl:} --json $OUT/wl_${step#wl:}.json 2>&1 | tail -40 ;;
    b22:*)
      # issue 22: the flat tree (.gpu/before) and main, alternated, one benchmark module
      m=${step#b22:}
      for round in $(seq ${ROUNDS:-1}); do
        (cd .gpu/before && PYTHONPATH=/tmp/site:$PWD python3 -m benchmarks.$m --json $OUT/b22_${m}_before_$round.json > $OUT/b22_${m}_before_$round.log 2>&1)
        python3 -m benchmarks.$m --json $OUT/b22_${m}_after_$round.json > $OUT/b22_${m}_after_$round.log 2>&1
      done
      tail -25 $OUT/b22_${m}_after_1.log ;;
    ab)
      # a tree of an earlier commit (AB_DIR, from git archive) and this one alternated,
      # benchmarks.workloads --only AB_ONLY, ROUNDS times: before/after in one run
      for round in $(seq ${ROUNDS:-2}); do
        (cd ${AB_DIR:-.gpu/start} && PYTHONPATH=/tmp/site:$PWD python3 -m benchmarks.workloads --only ${AB_ONLY:-percall} --json $OUT/ab_before_$round.json > $OUT/ab_before_$round.log 2>&1)
        python3 -m benchmarks.workloads --only ${AB_ONLY:-percall} --json $OUT/ab_after_$round.json > $OUT/ab_after_$round.log 2>&1
      done
      grep "^|" $OUT/ab_after_1.log | tail -30 ;;
    counts) python3 tools/device/counts.py; python3 tools/device/counts.py percall ;;
    prim) python3 tools/device/primitives.py 2>&1 | tee $OUT/prim.log ;;
    pieces) python3 tools/device/launch_pieces.py 2>&1 | tee $OUT/pieces.log ;;
    chain) python3 tools/device/chain_probe.py 2>&1 | tee $OUT/chain.log ;;
    lines|lines:*) p=${step#lines}; p=${p#:}; python3 tools/device/chain_lines.py ${p//,/ } 2>&1 | tee $OUT/lines${p:+_${p//,/_}}.log ;;
    raw) python3 tools/device/raw_launch.py 2>&1 | tee $OUT/raw.log ;;
    device|device:*) p=${step#device}; p=${p#:}; python3 tools/device/line_device.py ${p//,/ } 2>&1 | tee $OUT/device.log ;;
    streams|streams:*) p=${step#streams}; p=${p#:}; python3 tools/device/stream_probe.py ${p//,/ } 2>&1 | tee $OUT/streams.log ;;
    calls|calls:*) p=${step#calls}; p=${p#:}; python3 tools/device/line_calls.py $p > $OUT/calls$p.log 2>&1; grep "^== " $OUT/calls$p.log ;;
    itc|itc:*) p=${step#itc}; p=${p#:}; python3 tools/device/iterate_costs.py ${p//,/ } 2>&1 | grep -v "^ \+leaves\|PerformanceWarning" | tee $OUT/itc.log ;;
    hostprof:*) p=${step#hostprof:}; python3 tools/device/hostprof.py ${p//,/ } > $OUT/hostprof.log 2>&1; grep "^== " $OUT/hostprof.log ;;
    b25h200) if grep -q H200 $OUT/gpu.txt; then bash tools/device/run.sh b25 | tail -45; else echo "not an H200: b25 skipped"; fi ;;
    *) echo "unknown step $step" ;;
  esac
done
echo "=== done at $((SECONDS - t0)) s"
