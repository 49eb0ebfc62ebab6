# Static, omnibatch and the oracle side by side on one scenario of one
# bench run, to PNG: per policy (a column), the local batch of every rank
# and the step time, on the same axes, all from zero.
#
#   gnuplot -e "static='s.csv'; omnibatch='o.csv'; oracle='w.csv'; out='cmp.png'; run='headline'" \
#           bench/hetsgd/compare.gp
#
# static, omnibatch: traces of hetsgd --trace (step,rank,policy,batch,compute_s,step_s,speed,cpu_s,step_cpu_s);
# oracle: optional, a third column; out: the PNG; run: what the scenario was, for the title.

if (!exists("static") || !exists("omnibatch") || !exists("out")) {
    print "usage: gnuplot -e \"static='s.csv'; omnibatch='o.csv'; [oracle='w.csv';] out='cmp.png'; run='...'\" compare.gp"
    exit status 2
}
if (!exists("run")) {
    run = "one scenario"
}
files = exists("oracle") ? static . " " . omnibatch . " " . oracle : static . " " . omnibatch
names = exists("oracle") ? "static omnibatch oracle" : "static omnibatch"
n = words(files)

set datafile separator ","
# Shared axes: the most of every trace.
batch_max = 0; step_max = 0; last_step = 0; ranks = 1
do for [i=1:n] {
    stats word(files, i) using 2 every ::1 nooutput
    ranks = int(STATS_max) + 1
    stats word(files, i) using 1 every ::1 nooutput
    last_step = STATS_max > last_step ? STATS_max : last_step
    stats word(files, i) using 4 every ::1 nooutput
    batch_max = STATS_max > batch_max ? STATS_max : batch_max
    stats word(files, i) using (1000 * $6) every ::1 nooutput
    step_max = STATS_max > step_max ? STATS_max : step_max
}
width(r) = 1 + 1.5 * (ranks - 1 - r)

set terminal pngcairo size 1600,800 font ",10" noenhanced
set output out
set multiplot layout 2,n columnsfirst title sprintf("hetsgd %s: %s side by side (%d ranks)", run, names, ranks)
set grid
set xrange [0:last_step]
set key top right
do for [i=1:n] {
    f = word(files, i)
    set title word(names, i)
    set xlabel ""
    set ylabel "local batch (samples)"
    set yrange [0:batch_max * 1.1]
    plot for [r=0:ranks-1] f every ranks::(1 + r) using 1:4 \
         with steps lw width(r) lt (r + 1) title sprintf("rank %d", r)
    set title ""
    set xlabel "global step"
    set ylabel "step time (ms)"
    set yrange [0:step_max * 1.1]
    plot f every ranks::1 using 1:(1000 * $6) with lines lw 1.5 lc "black" title "step (rank 0)"
}
unset multiplot
