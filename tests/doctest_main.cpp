// tests/doctest_main.cpp: doctest's main, linked into each test executable.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
