rcorr.cens <- function(...) stop("Hmisc stub (bundle for the GPU machine): rcorr.cens is not available")
errbar <- function(...) stop("Hmisc stub (bundle for the GPU machine): errbar is not available")
