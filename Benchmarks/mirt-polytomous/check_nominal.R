library(mirt, lib.loc="/work/Rlib")
d0 <- read.csv("sat12.csv")
ours <- read.csv("ours_nominal.csv")
sv <- mirt(d0, 1, itemtype="nominal", pars="values")
for (i in 1:32) {
  it <- paste0("Item.", i)
  o <- ours[ours$item == it,]
  a4 <- o$a[o$k == 4]; a1 <- a4 / 4
  set <- function(name, v) { sel <- sv$item == it & sv$name == name; sv$value[sel] <<- v }
  set("a1", a1)
  for (k in 1:3) set(paste0("ak", k), o$a[o$k == k] / a1)
  for (k in 1:4) set(paste0("d", k), o$c[o$k == k])
}
m <- mirt(d0, 1, itemtype="nominal", pars=sv, TOL=NaN, verbose=FALSE)
cat("mirt logLik at iqscore's nominal parameters:", sprintf("%.6f", logLik(m)), "\n")
