# The credential exam that ships with LNIRT (CredentialForm1: 1,636 candidates x 170 items, responses and seconds).
#   Rscript credential.R export   # writes credential_long.csv (long: session_id,item_id,response,seconds; 0 s as none)
#   Rscript credential.R fit      # LNIRT(td = FALSE, 3,000 iterations) against credential_bank.csv (ours)
library(LNIRT)
mode <- commandArgs(trailingOnly = TRUE)[1]
data(CredentialForm1)
d <- CredentialForm1
Y <- as.matrix(d[, paste0("iraw.", 1:170)])
RT <- as.matrix(d[, paste0("idur.", 1:170)])
if (mode == "export") {
    long <- data.frame(session_id=rep(d$EID, times=170), item_id=rep(paste0("i", 1:170), each=nrow(d)),
                       response=as.vector(Y), seconds=as.vector(RT))
    long <- long[!is.na(long$response), ]
    long$seconds[!is.na(long$seconds) & long$seconds == 0] <- NA
    long <- long[order(match(long$session_id, d$EID)), ]
    write.csv(long, "credential_long.csv", row.names=FALSE, na="")
    quit()
}
RT[RT == 0] <- NA
set.seed(12345)
t0 <- proc.time()
out <- LNIRT(RT=log(RT), Y=Y, XG=3000, burnin=20, td=FALSE, ident=2)
cat("LNIRT seconds", (proc.time() - t0)[3], "\n")
pm <- out$Post.Means
bank <- read.csv("credential_bank.csv")
rho <- pm$Cov.Person.Ability.Speed / sqrt(pm$Var.Person.Speed * pm$Var.Person.Ability)
cat(sprintf("speed SD: LNIRT %.4f ours %.4f; rho: LNIRT %.4f ours %.4f\n", sqrt(pm$Var.Person.Speed), bank$speed_sd[1], rho, bank$speed_correlation[1]))
lam <- pm$Time.Intensity; sig <- sqrt(pm$Sigma2)
cat(sprintf("time intensity: max |diff| %.4f, correlation %.6f; residual SD 1/alpha: max |diff| %.4f, mean (LNIRT - ours) %.4f\n",
            max(abs(lam - bank$time_intensity)), cor(lam, bank$time_intensity), max(abs(sig - 1/bank$time_discrimination)), mean(sig - 1/bank$time_discrimination)))
