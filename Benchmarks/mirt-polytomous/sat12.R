library(mirt, lib.loc="/work/Rlib")
data(SAT12)
d <- SAT12
d[d == 8] <- NA
cat("values", sort(unique(unlist(d))), "\n")
d0 <- d - 1
write.csv(d0, "sat12.csv", row.names=FALSE, quote=FALSE, na="")
t0 <- proc.time()
m <- mirt(d0, 1, itemtype="nominal", TOL=1e-6, technical=list(NCYCLES=20000), verbose=FALSE)
t1 <- proc.time() - t0
cat("MODEL nominal logLik", sprintf("%.6f", logLik(m)), "converged", extract.mirt(m,"converged"), "iter", extract.mirt(m,"iterations"), "npars", extract.mirt(m, "nest"), "seconds", t1[3], "\n")
print(coef(m, simplify=TRUE)$items[1:3,])
