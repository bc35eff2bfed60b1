library(testthat)
library(gpucor)

test_check("gpucor")
