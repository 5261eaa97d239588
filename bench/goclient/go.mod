module scheduler-extender/bench/goclient

go 1.21
