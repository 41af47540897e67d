# What the Makefile and scripts/*.mk share.
SHELL := /bin/bash
VENV ?= .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
ENABLE2K ?= enable2k
