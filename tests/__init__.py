"""The test suite (a package, so that unit/ and integration/ may hold files of the same name)."""
