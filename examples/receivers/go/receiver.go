// Webhook receiver with only the Go standard library.
//
// Serve:   WEBHOOK_SECRET=whsec_... PORT=8443 [TLS_CERT_FILE=cert.pem TLS_KEY_FILE=key.pem] go run receiver.go
// Vectors: go run receiver.go -vectors conformance/signature-vectors.json
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"sync"
	"time"
)

const maxBodyBytes = 1 << 20

var (
	signaturePattern = regexp.MustCompile(`^v1=([0-9a-fA-F]{64})$`)
	timestampPattern = regexp.MustCompile(`^[0-9]{1,12}$`)
)

// verifySignature: v1= + hex HMAC-SHA256 of "<timestamp>." + raw body bytes, keyed with the whole whsec_ string.
func verifySignature(secret, timestamp, signature string, rawBody []byte, nowSeconds, toleranceSeconds int64) bool {
	if !timestampPattern.MatchString(timestamp) {
		return false
	}
	ts, _ := strconv.ParseInt(timestamp, 10, 64)
	if age := nowSeconds - ts; age > toleranceSeconds || -age > toleranceSeconds {
		return false
	}
	received := signaturePattern.FindStringSubmatch(signature)
	if received == nil {
		return false
	}
	receivedMAC, _ := hex.DecodeString(received[1]) // hex.DecodeString accepts either case
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(timestamp + "."))
	mac.Write(rawBody)
	return hmac.Equal(mac.Sum(nil), receivedMAC) // constant time
}

type receiver struct {
	secret           string
	toleranceSeconds int64
	mu               sync.Mutex
	processed        map[string]bool // in memory for the example; in production, a unique key in your database
}

func logOutcome(fields map[string]interface{}) {
	line, _ := json.Marshal(fields)
	fmt.Println(string(line))
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/webhooks/funding" {
		http.NotFound(w, req)
		return
	}
	rawBody, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxBodyBytes)) // the bytes as sent
	if err != nil {
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return
	}
	eventID := req.Header.Get("X-Service-Event-Id")
	if !verifySignature(r.secret, req.Header.Get("X-Service-Timestamp"), req.Header.Get("X-Service-Signature"), rawBody, time.Now().Unix(), r.toleranceSeconds) {
		logOutcome(map[string]interface{}{"outcome": "rejected", "eventId": eventID})
		http.Error(w, "bad signature", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.processed[eventID] {
		logOutcome(map[string]interface{}{"outcome": "duplicate", "eventId": eventID})
		fmt.Fprint(w, "duplicate")
		return
	}
	var event struct {
		Type   string `json:"type"`
		UserID int64  `json:"userId"`
	}
	if err := json.Unmarshal(rawBody, &event); err != nil {
		http.Error(w, "not JSON", http.StatusBadRequest)
		return
	}
	// Your processing goes here.
	r.processed[eventID] = true
	logOutcome(map[string]interface{}{"outcome": "processed", "eventId": eventID, "type": event.Type, "userId": event.UserID})
	fmt.Fprint(w, "processed")
}

type vector struct {
	Name     string            `json:"name"`
	Expected string            `json:"expected"`
	Reason   string            `json:"reason"`
	Secret   string            `json:"secret"`
	Headers  map[string]string `json:"headers"`
	Body     struct {
		Base64 string `json:"base64"`
	} `json:"body"`
	Now              int64 `json:"now"`
	ToleranceSeconds int64 `json:"toleranceSeconds"`
}

func runVectors(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	var file struct {
		Vectors []vector `json:"vectors"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		log.Fatal(err)
	}
	failed := 0
	for _, v := range file.Vectors {
		body, _ := base64.StdEncoding.DecodeString(v.Body.Base64)
		verdict := "reject"
		if verifySignature(v.Secret, v.Headers["X-Service-Timestamp"], v.Headers["X-Service-Signature"], body, v.Now, v.ToleranceSeconds) {
			verdict = "accept"
		}
		status := "ok  "
		if verdict != v.Expected {
			status = "FAIL"
			failed++
		}
		fmt.Printf("%s %s: %s (expected %s, %s)\n", status, v.Name, verdict, v.Expected, v.Reason)
	}
	fmt.Printf("%d/%d vectors passed\n", len(file.Vectors)-failed, len(file.Vectors))
	if failed > 0 {
		return 1
	}
	return 0
}

func main() {
	vectors := flag.String("vectors", "", "run the conformance vectors in this file and exit")
	flag.Parse()
	if *vectors != "" {
		os.Exit(runVectors(*vectors))
	}
	secret := os.Getenv("WEBHOOK_SECRET")
	if secret == "" {
		log.Fatal("Set WEBHOOK_SECRET to the whsec_... secret shown when you enabled the webhook")
	}
	tolerance := int64(300)
	if value, err := strconv.ParseInt(os.Getenv("WEBHOOK_TOLERANCE_SECONDS"), 10, 64); err == nil {
		tolerance = value
	}
	port := os.Getenv("PORT")
	if port == "" {
		port = "8443"
	}
	server := &http.Server{
		Addr:              ":" + port,
		Handler:           &receiver{secret: secret, toleranceSeconds: tolerance, processed: map[string]bool{}},
		ReadHeaderTimeout: 5 * time.Second,
	}
	listener, err := net.Listen("tcp", server.Addr)
	if err != nil {
		log.Fatal(err)
	}
	cert, key := os.Getenv("TLS_CERT_FILE"), os.Getenv("TLS_KEY_FILE")
	if cert != "" && key != "" {
		fmt.Printf("listening on https://127.0.0.1:%s\n", port)
		log.Fatal(server.ServeTLS(listener, cert, key))
	}
	fmt.Printf("listening on http://127.0.0.1:%s\n", port)
	log.Fatal(server.Serve(listener))
}
