library(mirt, lib.loc="/work/Rlib")
data(Science)
d <- Science - 1
out <- data.frame(row=1:nrow(d))
for (it in c("graded","gpcm","Rasch")) {
  m <- mirt(d, 1, itemtype=it, TOL=1e-6, technical=list(NCYCLES=20000), verbose=FALSE)
  cf <- coef(m, simplify=TRUE)
  cat("MODEL", it, "\n"); print(format(cf$items, digits=15)); print(format(cf$cov, digits=15))
  f <- fscores(m, method="EAP", full.scores.SE=TRUE)
  out[[paste0(it,"_eap")]] <- sprintf("%.10f", f[,1]); out[[paste0(it,"_se")]] <- sprintf("%.10f", f[,2])
}
write.csv(out[,-1], "science_mirt_eap.csv", row.names=FALSE, quote=FALSE)
