# The workloads' sizes and data, shared by Benchmarks/run.sh and Benchmarks/before_after.sh so that both measure the
# same files. Source it; then `workload_sizes SCALE` sets n1, n2, n3 (W1 persons, W2 and W3 sessions; SCALE 10 is
# --quick), and `workload_data IQSCORE OUT` simulates each workload the caller's `want NAME` asks for into OUT, once
# (fixed seeds; a file already there is kept).
workload_sizes() { n1=$((100000 / $1)); n2=$((200000 / $1)); n3=$((1000000 / $1)); }

workload_data() {
    local iqscore=$1 out=$2
    gen() { [ -s "$1" ] || "$iqscore" simulate "${@:2}" --out "$1" 2>/dev/null; }
    want W1 && gen "$out/w1_2pl_$n1.csv" --model 2pl --items 100 --persons "$n1" --no-id --bank-out "$out/w1_2pl_true.csv" --seed 42
    want W1-3PL && gen "$out/w1_3pl_$n1.csv" --model 3pl --items 100 --persons "$n1" --no-id --bank-out "$out/w1_3pl_true.csv" --seed 44
    want W2 && gen "$out/w2_2pl_$n2.csv" --model 2pl --items 1500 --items-per-session 25 --persons "$n2" --layout long \
        --domains pattern,logic,spatial,math,verbal,memory --bank-out "$out/w2_2pl_true.csv" --seed 43
    want W2-3PL && gen "$out/w2_3pl_$n2.csv" --model 3pl --items 1500 --items-per-session 25 --persons "$n2" --layout long \
        --domains pattern,logic,spatial,math,verbal,memory --bank-out "$out/w2_3pl_true.csv" --seed 45
    want W3 && gen "$out/w3_$n3.csv" --model 2pl --items 1500 --items-per-session 25 --persons "$n3" --layout long \
        --domains pattern,logic,spatial,math,verbal,memory --bank-out "$out/w3_bank.csv" --seed 11
    return 0
}
