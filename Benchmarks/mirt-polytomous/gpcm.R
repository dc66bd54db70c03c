library(mirt, lib.loc="/work/Rlib")
data(Science)
d <- Science - 1
m <- mirt(d, 1, itemtype="gpcm", SE=TRUE, TOL=1e-6, technical=list(NCYCLES=20000), verbose=FALSE)
cat("MODEL gpcm logLik", sprintf("%.6f", logLik(m)), "converged", extract.mirt(m,"converged"), "iter", extract.mirt(m,"iterations"), "\n")
cf <- coef(m, printSE=TRUE)
for (i in 1:4) { x <- cf[[i]]; cat("ITEM", i, "par", sprintf("%.6f", x[1,c(1,7,8,9)]), "\n"); cat("ITEM", i, "se", sprintf("%.6f", x[2,c(1,7,8,9)]), "\n") }
f <- fscores(m, method="EAP", full.scores.SE=TRUE)
cat("EAP first", sprintf("%.8f", f[1:5,1]), "SE", sprintf("%.8f", f[1:5,2]), "\n")
write.csv(f, "eap_gpcm.csv", row.names=FALSE)
