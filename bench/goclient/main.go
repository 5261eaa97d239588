// goclient calls /filter the way kube-scheduler's HTTP extender does (pkg/scheduler/extender.go):
// one http.Client with the extender's httpTimeout (5 s) over a keep-alive transport, the
// ExtenderArgs body made by json.Marshal for every call, one request in flight, the answer
// decoded as an ExtenderFilterResult. It alternates between the given URLs call by call, so that
// every target sees the same machine, and prints each target's median and 90th percentile of
// the round trip (send, wait, decode), the median time to the answer's first byte (the server's
// share: the client's own decoding of a large answer is most of the rest), and whether all
// targets passed the same nodes.
//
// usage: goclient -body ARGS.json -runs N URL [URL ...]
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"sort"
	"strings"
	"time"
)

type extenderArgs struct {
	Pod       json.RawMessage `json:"Pod"`
	Nodes     json.RawMessage `json:"Nodes"`
	NodeNames *[]string       `json:"NodeNames"`
}

type filterResult struct {
	Nodes *struct {
		Items []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		} `json:"items"`
	} `json:"Nodes"`
	NodeNames                  *[]string         `json:"NodeNames"`
	FailedNodes                map[string]string `json:"FailedNodes"`
	FailedAndUnresolvableNodes map[string]string `json:"FailedAndUnresolvableNodes"`
	Error                      string            `json:"Error"`
}

func (r *filterResult) passed() []string {
	var names []string
	if r.NodeNames != nil {
		names = append(names, (*r.NodeNames)...)
	} else if r.Nodes != nil {
		for _, n := range r.Nodes.Items {
			names = append(names, n.Metadata.Name)
		}
	}
	sort.Strings(names)
	return names
}

// The transport of utilnet.SetTransportDefaults as the scheduler's extender client gets it.
func schedulerClient(timeout time.Duration) *http.Client {
	transport := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout: 10 * time.Second,
		IdleConnTimeout:     90 * time.Second,
		MaxIdleConnsPerHost: 25,
	}
	return &http.Client{Transport: transport, Timeout: timeout}
}

type timing struct {
	roundTrip time.Duration
	firstByte time.Duration
}

func call(client *http.Client, url string, args *extenderArgs) (timing, []string, error) {
	var t timing
	out, err := json.Marshal(args)
	if err != nil {
		return t, nil, err
	}
	start := time.Now()
	req, err := http.NewRequest("POST", url, bytes.NewReader(out))
	if err != nil {
		return t, nil, err
	}
	trace := &httptrace.ClientTrace{GotFirstResponseByte: func() { t.firstByte = time.Since(start) }}
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return t, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return t, nil, fmt.Errorf("%s: HTTP %d", url, resp.StatusCode)
	}
	var result filterResult
	if err := json.NewDecoder(resp.Body).Decode(&result); err != nil {
		return t, nil, err
	}
	t.roundTrip = time.Since(start)
	if result.Error != "" {
		return t, nil, fmt.Errorf("%s: %s", url, result.Error)
	}
	return t, result.passed(), nil
}

func percentile(samples []time.Duration, p float64) float64 {
	sorted := append([]time.Duration(nil), samples...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	return float64(sorted[int(p*float64(len(sorted)-1))].Microseconds()) / 1000
}

func main() {
	bodyPath := flag.String("body", "", "ExtenderArgs JSON (bench/gen_extender_args.py)")
	runs := flag.Int("runs", 30, "timed calls per URL")
	warmup := flag.Int("warmup", 3, "untimed calls per URL first")
	names := flag.Bool("names", false, "send the NodeNames form of the body (names only, Nodes null)")
	compare := flag.Bool("compare", true, "fail unless every target passed the same nodes")
	flag.Parse()
	urls := flag.Args()
	if *bodyPath == "" || len(urls) == 0 {
		fmt.Fprintln(os.Stderr, "usage: goclient -body ARGS.json [-runs N] [-names] URL [URL ...]")
		os.Exit(2)
	}
	raw, err := os.ReadFile(*bodyPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var args extenderArgs
	if err := json.Unmarshal(raw, &args); err != nil {
		fmt.Fprintln(os.Stderr, "body:", err)
		os.Exit(1)
	}
	if *names {
		var list struct {
			Items []struct {
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
			} `json:"items"`
		}
		if err := json.Unmarshal(args.Nodes, &list); err != nil {
			fmt.Fprintln(os.Stderr, "body Nodes:", err)
			os.Exit(1)
		}
		nodeNames := make([]string, 0, len(list.Items))
		for _, n := range list.Items {
			nodeNames = append(nodeNames, n.Metadata.Name)
		}
		args.Nodes = json.RawMessage("null")
		args.NodeNames = &nodeNames
	}
	client := schedulerClient(5 * time.Second)
	samples := make([][]time.Duration, len(urls))
	firstBytes := make([][]time.Duration, len(urls))
	answers := make([][]string, len(urls))
	for i := 0; i < *warmup+*runs; i++ {
		for u, url := range urls {
			t, passed, err := call(client, url, &args)
			if err != nil {
				fmt.Fprintln(os.Stderr, "goclient:", err)
				os.Exit(1)
			}
			answers[u] = passed
			if i >= *warmup {
				samples[u] = append(samples[u], t.roundTrip)
				firstBytes[u] = append(firstBytes[u], t.firstByte)
			}
		}
	}
	same := true
	for u := range urls {
		if strings.Join(answers[u], ",") != strings.Join(answers[0], ",") {
			same = false
		}
		fmt.Printf("go net/http  %-48s median %8.2f ms  p90 %8.2f ms  first byte median %8.2f ms  passed %d\n", urls[u],
			percentile(samples[u], 0.5), percentile(samples[u], 0.9), percentile(firstBytes[u], 0.5), len(answers[u]))
	}
	if !*compare {
		return
	}
	if same {
		fmt.Println("go net/http  answers: every target passed the same nodes")
	} else {
		fmt.Println("go net/http  answers: DIFFER between targets")
		os.Exit(3)
	}
}
