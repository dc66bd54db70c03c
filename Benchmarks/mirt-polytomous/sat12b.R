library(mirt, lib.loc="/work/Rlib")
d0 <- read.csv("sat12.csv")
t0 <- proc.time()
m <- mirt(d0, 1, itemtype="nominal", verbose=FALSE)
t1 <- proc.time() - t0
cat("MODEL nominal default logLik", sprintf("%.6f", logLik(m)), "converged", extract.mirt(m,"converged"), "iter", extract.mirt(m,"iterations"), "seconds", t1[3], "\n")
m2 <- mirt(d0, 1, itemtype="nominal", TOL=1e-5, technical=list(NCYCLES=3000), verbose=FALSE)
cat("MODEL nominal tol1e-5 logLik", sprintf("%.6f", logLik(m2)), "converged", extract.mirt(m2,"converged"), "iter", extract.mirt(m2,"iterations"), "\n")
