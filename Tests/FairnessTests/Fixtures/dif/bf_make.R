# The multiple-group bifactor fixture (bf_two_groups.csv, bf_items.csv) and mirt 1.47's fit of it, the reference
# for calibrate --model bifactor --group-column (Tests/iqscoreTests/DIFCLITests.swift). Run with R_LIBS holding
# mirt 1.47 (../shared/NOTES.md), OMP_NUM_THREADS=1, from this folder.
# Two groups, 12 items: general factor + 3 specific factors of 4 items; focal general factor N(-0.5, 1.2^2).
library(mirt)
QP <- 31
set.seed(2029)
J <- 12
ag <- round(runif(J, 0.8, 2.0), 2)
as <- round(runif(J, 0.4, 1.2), 2)
d <- round(rnorm(J, 0, 0.9), 2)
spec <- rep(1:3, each = 4)
a <- cbind(ag, matrix(0, J, 3))
for (j in 1:J) a[j, 1 + spec[j]] <- as[j]
N <- 1500
ref <- simdata(a, d, N, itemtype = "dich", sigma = diag(4))
sig <- diag(4); sig[1, 1] <- 1.2^2
foc <- simdata(a, d, N, itemtype = "dich", mu = c(-0.5, 0, 0, 0), sigma = sig)
dat <- rbind(ref, foc)
colnames(dat) <- paste0("i", 1:J)
group <- rep(c("A", "B"), each = N)
out <- data.frame(person = paste0("p", 1:(2 * N)), group = group, dat)
write.csv(out, "bf_two_groups.csv", row.names = FALSE, quote = FALSE)
write.csv(data.frame(item_id = paste0("i", 1:J), domain = paste0("s", spec)), "bf_items.csv", row.names = FALSE, quote = FALSE)

# mirt frees every factor's mean and variance in group B with "free_means", "free_var"; iqscore's model frees the
# general factor's only (the specific factors N(0, 1) in every group), so those two are freed by hand instead.
spec <- rep(1:3, each = 4)
group <- out$group
inv <- colnames(dat)
sv <- bfactor(dat, spec, group = group, invariance = inv, quadpts = QP, pars = "values")
free <- sv$group == "B" & sv$name %in% c("MEAN_1", "COV_11")
sv$est[free] <- TRUE
t0 <- proc.time()
fit <- bfactor(dat, spec, group = group, invariance = inv, quadpts = QP, pars = sv, TOL = 1e-6, verbose = FALSE,
               technical = list(NCYCLES = 5000), SE = TRUE)
cat("time", (proc.time() - t0)[3], "\n")
print(logLik(fit), digits = 12)
cf <- coef(fit, printSE = TRUE)
print(cf$B$GroupPars, digits = 10)
print(coef(fit, simplify = TRUE)$A$items, digits = 9)

# The default model of both: every factor's mean and variance free in group B.
fit <- bfactor(dat, spec, group = group, invariance = c(colnames(dat), "free_means", "free_var"), quadpts = QP, TOL = 1e-6,
               verbose = FALSE, technical = list(NCYCLES = 5000), SE = TRUE)
print(logLik(fit), digits = 12)
print(coef(fit, printSE = TRUE)$B$GroupPars, digits = 10)
