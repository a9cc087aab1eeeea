#!/usr/bin/env python3
"""Interleaved A/B of two cuda-harness builds on one request (run on the GPU machine).

  ab_harness.py OLD_BINARY NEW_BINARY OUT.json [--request R] [--rounds N]

Runs both binaries alternately (ABBA order, cubin cache warm) and compares, per build,
the median process wall time, the sum of the harness's own phases and each measured
case's median latency; writes the medians, min/max, the new/old ratios and every run.
Interleaving keeps clock and thermal drift out of the comparison.
"""
import argparse, json, statistics, subprocess, time


def main():
    p = argparse.ArgumentParser()
    p.add_argument('old')
    p.add_argument('new')
    p.add_argument('out')
    p.add_argument('--request', default='examples/harness/matmul/request.json')
    p.add_argument('--rounds', type=int, default=15)
    a = p.parse_args()
    bins = {'old': a.old, 'new': a.new}
    response = a.request.rsplit('/', 1)[0] + '/response.json'
    runs = {k: {} for k in bins}
    for b in bins.values():
        subprocess.run([b, a.request, '--quiet'], check=True)  # warm the cubin cache
    for i in range(a.rounds):
        order = list(bins.items()) if i % 2 == 0 else list(reversed(bins.items()))
        for k, b in order:
            t = time.perf_counter()
            subprocess.run([b, a.request, '--quiet'], check=True)
            wall = time.perf_counter() - t
            r = json.load(open(response))
            figures = {'wall_s': wall, 'phases_sum_ms': sum(r['phases_ms'].values())}
            for c in r['cases']:
                if c['timing']:
                    figures[c['name'] + '_median_ms'] = c['timing']['median_ms']
            for m, v in figures.items():
                runs[k].setdefault(m, []).append(v)
    out = {k: {m: {'median': statistics.median(v), 'min': min(v), 'max': max(v)} for m, v in d.items()}
           for k, d in runs.items()}
    out['ratio_new_over_old'] = {m: out['new'][m]['median'] / out['old'][m]['median'] for m in runs['new']}
    print(json.dumps(out, indent=1))
    out['runs'] = runs
    json.dump(out, open(a.out, 'w'), indent=1)


if __name__ == '__main__':
    main()
