"""Context parallelism against real implementations: index maps of load balancers (`layout`) and
ring-attention libraries run on a gloo process group with recording CPU kernels (`conform`)."""
