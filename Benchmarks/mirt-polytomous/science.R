library(mirt, lib.loc="/work/Rlib")
data(Science)
d <- Science - 1
write.csv(d, "science.csv", row.names=FALSE, quote=FALSE)
for (it in c("graded","gpcm","Rasch")) {
  m <- mirt(d, 1, itemtype=it, SE=TRUE, TOL=1e-6, verbose=FALSE)
  cat("MODEL", it, "logLik", sprintf("%.6f", logLik(m)), "converged", extract.mirt(m,"converged"), "iter", extract.mirt(m,"iterations"), "\n")
  cf <- coef(m, printSE=TRUE)
  for (i in 1:4) { x <- cf[[i]]; cat("ITEM", i, "par", sprintf("%.6f", x[1,]), "\n"); cat("ITEM", i, "se", sprintf("%.6f", x[2,]), "\n") }
  cat("GROUP par", sprintf("%.6f", cf$GroupPars[1,]), "se", sprintf("%.6f", cf$GroupPars[2,]), "\n")
  ci <- coef(m, IRTpars=TRUE, simplify=TRUE)$items
  print(ci, digits=8)
  f <- fscores(m, method="EAP", full.scores.SE=TRUE)
  cat("EAP first", sprintf("%.8f", f[1:5,1]), "SE", sprintf("%.8f", f[1:5,2]), "\n")
  write.csv(f, paste0("eap_", it, ".csv"), row.names=FALSE)
}
