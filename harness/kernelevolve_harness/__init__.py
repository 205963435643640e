"""KernelEvolve's harness: judges one candidate kernel against its baseline and prints a verdict."""
