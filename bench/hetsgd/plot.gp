# Per-rank batch, compute time and speed over the steps of one hetsgd run, to PNG.
#
#   gnuplot -e "trace='run.csv'; out='run.png'; run='headline, omnibatch'" bench/hetsgd/plot.gp
#
# trace: the CSV of hetsgd --trace (step,rank,policy,batch,compute_s,step_s,speed,cpu_s,step_cpu_s).
# out:   the PNG to write (default: the trace's name with .png).
# run:   what the run was, for the title (default: the trace's file name).
#
# Every axis starts at zero.  Ranks with equal values would hide each other,
# so each rank's line is drawn thinner than the one before it: where lines
# coincide they show as nested stripes, every rank's colour visible.

if (!exists("trace")) {
    print "usage: gnuplot -e \"trace='run.csv'; out='run.png'; run='what ran'\" plot.gp"
    exit status 2
}
if (!exists("out")) {
    out = trace[1:strstrt(trace, ".csv") > 0 ? strstrt(trace, ".csv") - 1 : strlen(trace)] . ".png"
}
if (!exists("run")) {
    run = system(sprintf("basename '%s'", trace))
}

set datafile separator ","
# Ranks: one more than the largest rank in column 2 (the header line is skipped).
stats trace using 2 every ::1 nooutput
ranks = int(STATS_max) + 1
stats trace using 1 every ::1 nooutput
last_step = int(STATS_max)
# Rank r's line width: the first rank widest.
width(r) = 1 + 1.5 * (ranks - 1 - r)

set terminal pngcairo size 1200,900 font ",10" noenhanced
set output out
set multiplot layout 3,1 title sprintf("hetsgd: %s (%d ranks)", run, ranks)
set key outside right top
set grid
set xrange [0:last_step]
set yrange [0:*]
# Room above, so a line at the top is not hidden by the frame.
set offsets 0, 0, graph 0.05, 0

set ylabel "local batch (samples)"
plot for [r=0:ranks-1] trace every ranks::(1 + r) using 1:4 \
     with steps lw width(r) lt (r + 1) title sprintf("rank %d", r)

set ylabel "compute per step (ms)"
plot for [r=0:ranks-1] trace every ranks::(1 + r) using 1:(1000 * $5) \
     with lines lw width(r) lt (r + 1) title sprintf("rank %d", r)

set ylabel "relative speed (fastest = 1)"
set xlabel "global step"
set yrange [0:1.1]
set y2label "step (ms)"
set y2tics
set y2range [0:*]
plot for [r=0:ranks-1] trace every ranks::(1 + r) using 1:7 \
     with steps lw width(r) lt (r + 1) title sprintf("speed, rank %d", r), \
     trace every ranks::1 using 1:(1000 * $6) axes x1y2 with lines lw 1 lc "black" dt 2 \
     title "step time (right axis)"
unset multiplot
