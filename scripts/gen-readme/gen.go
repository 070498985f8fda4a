package main

//go:generate go run . ../../README.md
