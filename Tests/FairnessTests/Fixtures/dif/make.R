.libPaths(c("/work/Rlib", .libPaths()))
suppressMessages(library(mirt))
set.seed(2929)
J <- 12; N <- 1000
a <- matrix(rlnorm(J, 0.2, 0.3)); d <- matrix(rnorm(J))
aF <- a; dF <- d
dF[1] <- d[1] - 0.8        # uniform DIF
aF[2] <- a[2] * 0.5        # non-uniform DIF
dat1 <- simdata(a, d, N, itemtype = "2PL")
dat2 <- simdata(aF, dF, N, itemtype = "2PL", mu = -0.5, sigma = matrix(1.44))
dat <- rbind(dat1, dat2)
colnames(dat) <- paste0("i", 1:J)
group <- factor(c(rep("ref", N), rep("foc", N)), levels = c("ref", "foc"))
write.csv(data.frame(person = paste0("p", 1:(2*N)), group = as.character(group), dat), "mg2.csv", row.names = FALSE, quote = FALSE)
t0 <- Sys.time()
mod <- multipleGroup(dat, 1, group, invariance = c(colnames(dat), "free_means", "free_var"),
                     TOL = 1e-6, quadpts = 61, verbose = FALSE, SE = TRUE)
cat("time", format(Sys.time() - t0), "\n")
cat(sprintf("LL %.6f\n", logLik(mod)))
cf <- coef(mod, simplify = TRUE)
print(cf$foc$means); print(cf$foc$cov)
print(coef(mod, printSE = TRUE)$foc$GroupPars)
write.csv(cf$ref$items, "mg2_items.csv")
# one item freed
mod1 <- multipleGroup(dat, 1, group, invariance = c(colnames(dat)[-1], "free_means", "free_var"),
                     TOL = 1e-6, quadpts = 61, verbose = FALSE)
cat(sprintf("LL_free1 %.6f\n", logLik(mod1)))
t0 <- Sys.time()
dif <- DIF(mod, c("a1", "d"), scheme = "drop", items2test = 1:J, TOL = 1e-6, quadpts = 61, verbose = FALSE)
cat("dif time", format(Sys.time() - t0), "\n")
print(dif)
write.csv(dif, "mg2_dif.csv")
# Wald
modW <- multipleGroup(dat, 1, group, invariance = c(colnames(dat)[3:J], "free_means", "free_var"),
                     TOL = 1e-6, quadpts = 61, verbose = FALSE, SE = TRUE)
cat(sprintf("LL_free12 %.6f\n", logLik(modW)))
print(DIF(modW, c("a1","d"), Wald = TRUE, items2test = 1:2))
# 3PL
mod3 <- multipleGroup(dat, 1, group, itemtype = "3PL", invariance = c(colnames(dat), "free_means", "free_var"),
                     TOL = 1e-6, quadpts = 61, verbose = FALSE)
cat(sprintf("LL3 %.6f\n", logLik(mod3)))
print(coef(mod3, simplify = TRUE)$foc$means); print(coef(mod3, simplify = TRUE)$foc$cov)
write.csv(coef(mod3, simplify = TRUE)$ref$items, "mg2_items3.csv")
