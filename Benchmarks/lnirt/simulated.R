# LNIRT 0.5.1 on a data set simulated by `iqscore simulate --times` (wide: q's response in q, its seconds in q_time).
library(LNIRT)
d <- read.csv("sim.csv", check.names=FALSE)
items <- grep("_time$", names(d), invert=TRUE, value=TRUE)[-1]
Y <- as.matrix(d[, items])
RT <- log(as.matrix(d[, paste0(items, "_time")]))
set.seed(2026)
t0 <- proc.time()
out <- LNIRT(RT=RT, Y=Y, XG=3000, burnin=20, td=FALSE, ident=2)
cat("seconds", (proc.time() - t0)[3], "\n")
pm <- out$Post.Means
s <- out$MCMC.Samples
keep <- 601:3000
rho <- pm$Cov.Person.Ability.Speed / sqrt(pm$Var.Person.Speed * pm$Var.Person.Ability)
truth <- read.csv("truth.csv"); ours <- read.csv("ours.csv")
cat(sprintf("speed SD: truth %.4f  LNIRT %.4f (posterior SD %.4f)  ours %.4f (SE %s)\n", truth$speed_sd[1], sqrt(pm$Var.Person.Speed),
            sd(sqrt(s$Var.Person.Speed[keep])), ours$speed_sd[1], "see summary"))
cat(sprintf("rho: truth %.4f  LNIRT %.4f (posterior SD %.4f)  ours %.4f\n", truth$speed_correlation[1], rho,
            sd(s$Cov.Person.Ability.Speed[keep] / sqrt(s$Var.Person.Speed[keep] * s$Var.Person.Ability[keep])), ours$speed_correlation[1]))
lam <- pm$Time.Intensity; sig <- sqrt(pm$Sigma2)
cat(sprintf("time intensity: max |LNIRT - ours| %.4f, RMSE vs truth LNIRT %.4f ours %.4f, median posterior SD %.4f\n",
            max(abs(lam - ours$time_intensity)), sqrt(mean((lam - truth$time_intensity)^2)), sqrt(mean((ours$time_intensity - truth$time_intensity)^2)),
            median(apply(s$Time.Intensity[keep,], 2, sd))))
cat(sprintf("residual SD 1/alpha: max |LNIRT - ours| %.4f, mean (LNIRT - ours) %.4f, RMSE vs truth LNIRT %.4f ours %.4f\n",
            max(abs(sig - 1/ours$time_discrimination)), mean(sig - 1/ours$time_discrimination),
            sqrt(mean((sig - 1/truth$time_discrimination)^2)), sqrt(mean((1/ours$time_discrimination - 1/truth$time_discrimination)^2))))
