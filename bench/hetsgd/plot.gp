# Per-rank batch and step time over the steps of one hetsgd run, to PNG.
#
#   gnuplot -e "trace='run.csv'; out='run.png'" bench/hetsgd/plot.gp
#
# trace: the CSV of hetsgd --trace (step,rank,policy,batch,compute_s,step_s,speed,cpu_s).
# out:   the PNG to write (default: the trace's name with .png).

if (!exists("trace")) {
    print "usage: gnuplot -e \"trace='run.csv'; out='run.png'\" plot.gp"
    exit status 2
}
if (!exists("out")) {
    out = trace[1:strstrt(trace, ".csv") > 0 ? strstrt(trace, ".csv") - 1 : strlen(trace)] . ".png"
}

set datafile separator ","
# Ranks: one more than the largest rank in column 2 (the header line is skipped).
stats trace using 2 every ::1 nooutput
ranks = int(STATS_max) + 1
stats trace using 1 every ::1 nooutput
last_step = int(STATS_max)

set terminal pngcairo size 1200,900 font ",10" noenhanced
set output out
set multiplot layout 3,1 title sprintf("hetsgd: %s, %d ranks", trace, ranks)
set key outside right top
set grid
# Room above and below, so a line at the extreme is not hidden by the frame.
set offsets 0, 0, graph 0.05, graph 0.05
set xrange [0:last_step]

set ylabel "local batch"
plot for [r=0:ranks-1] trace every ranks::(1 + r) using 1:4 \
     with steps lw 1.5 lt (r + 1) title sprintf("rank %d", r)

set ylabel "compute (ms)"
plot for [r=0:ranks-1] trace every ranks::(1 + r) using 1:(1000 * $5) \
     with lines lw 1 lt (r + 1) title sprintf("rank %d", r)

set ylabel "step (ms)"
set xlabel "global step"
set y2label "relative speed"
set y2tics
set y2range [0:1.05]   # speeds are relative to the fastest, at most 1
plot trace every ranks::1 using 1:(1000 * $6) with lines lw 1 lc "black" title "step (rank 0)", \
     for [r=0:ranks-1] trace every ranks::(1 + r) using 1:7 axes x1y2 \
     with steps dt 2 lt (r + 1) title sprintf("speed %d", r)
unset multiplot
