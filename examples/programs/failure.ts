// A program failure: dsh prints the output so far, then `error (exception): ...` and exits 1.
inspect("about to throw");
throw new Error("something went wrong");
