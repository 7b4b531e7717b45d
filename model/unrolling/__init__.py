"""The spatial-unrolling utilization model of the COAC paper (`utilization`) and MobileViT-S's
layers (`mobilevit`). Facts proved about it live in `ringproof.proofs.unrolling`."""
