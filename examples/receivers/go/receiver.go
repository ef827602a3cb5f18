// Webhook receiver with only the Go standard library.
//
// Serve:   WEBHOOK_SECRET=whsec_... PORT=8443 go run receiver.go
//
//	WEBHOOK_SCHEME=ed25519 WEBHOOK_PUBLIC_KEY=whpk_... PORT=8443 go run receiver.go   (public key only, no secret)
//
// Options: WEBHOOK_SCHEME=standard-webhooks, HOST=0.0.0.0, TLS_CERT_FILE=cert.pem TLS_KEY_FILE=key.pem
// Vectors: go run receiver.go -vectors conformance/signature-vectors.json
package main

import (
	"crypto/ed25519"
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
	"strings"
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

// standardWebhooksKey: the bytes the base64 after whsec_ encodes (either alphabet, padding optional).
func standardWebhooksKey(secret string) ([]byte, error) {
	encoded := strings.TrimRight(strings.TrimPrefix(secret, "whsec_"), "=")
	return base64.RawStdEncoding.DecodeString(strings.NewReplacer("-", "+", "_", "/").Replace(encoded))
}

// verifyStandardWebhook: Standard Webhooks, from the spec. webhook-signature holds space-separated
// "v1,<base64 HMAC-SHA256>" of "<webhook-id>.<webhook-timestamp>." + raw body; any one matching is enough.
// The id is signed too.
func verifyStandardWebhook(secret, id, timestamp, signatures string, rawBody []byte, nowSeconds, toleranceSeconds int64) bool {
	if id == "" || signatures == "" || !timestampPattern.MatchString(timestamp) {
		return false
	}
	ts, _ := strconv.ParseInt(timestamp, 10, 64)
	if age := nowSeconds - ts; age > toleranceSeconds || -age > toleranceSeconds {
		return false
	}
	key, err := standardWebhooksKey(secret)
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + timestamp + "."))
	mac.Write(rawBody)
	expected := []byte(base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	for _, versioned := range strings.Split(signatures, " ") {
		version, signature, _ := strings.Cut(versioned, ",")
		if version == "v1" && hmac.Equal([]byte(signature), expected) { // constant time
			return true
		}
	}
	return false
}

// ed25519PublicKey: the webhook's public key as the settings API shows it, whpk_ + base64 of the raw 32 bytes.
func ed25519PublicKey(whpk string) (ed25519.PublicKey, error) {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(whpk, "whpk_"))
	if err != nil {
		return nil, err
	}
	if len(raw) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("an Ed25519 public key is %d bytes, got %d", ed25519.PublicKeySize, len(raw))
	}
	return ed25519.PublicKey(raw), nil
}

// verifyEd25519: Standard Webhooks' asymmetric scheme with the public key alone. webhook-signature holds
// space-separated "v1a,<base64 Ed25519 signature>" of "<webhook-id>.<webhook-timestamp>." + raw body (two during a key
// rotation; "v1," HMAC entries beside them are skipped); any one verifying is enough.
func verifyEd25519(publicKey ed25519.PublicKey, id, timestamp, signatures string, rawBody []byte, nowSeconds, toleranceSeconds int64) bool {
	if id == "" || signatures == "" || !timestampPattern.MatchString(timestamp) {
		return false
	}
	ts, _ := strconv.ParseInt(timestamp, 10, 64)
	if age := nowSeconds - ts; age > toleranceSeconds || -age > toleranceSeconds {
		return false
	}
	signed := append([]byte(id+"."+timestamp+"."), rawBody...)
	for _, versioned := range strings.Split(signatures, " ") {
		version, encoded, _ := strings.Cut(versioned, ",")
		signature, err := base64.StdEncoding.DecodeString(encoded)
		if version == "v1a" && err == nil && len(signature) == ed25519.SignatureSize && ed25519.Verify(publicKey, signed, signature) {
			return true
		}
	}
	return false
}

type receiver struct {
	scheme           string // "x-service", "standard-webhooks" or "ed25519"
	secret           string
	publicKey        ed25519.PublicKey // the ed25519 scheme's only key
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
	now := time.Now().Unix()
	var eventID string
	var verified bool
	if r.scheme == "ed25519" {
		eventID = req.Header.Get("webhook-id")
		verified = verifyEd25519(r.publicKey, eventID, req.Header.Get("webhook-timestamp"), req.Header.Get("webhook-signature"), rawBody, now, r.toleranceSeconds)
	} else if r.scheme == "standard-webhooks" {
		eventID = req.Header.Get("webhook-id")
		verified = verifyStandardWebhook(r.secret, eventID, req.Header.Get("webhook-timestamp"), req.Header.Get("webhook-signature"), rawBody, now, r.toleranceSeconds)
	} else {
		eventID = req.Header.Get("X-Service-Event-Id")
		verified = verifySignature(r.secret, req.Header.Get("X-Service-Timestamp"), req.Header.Get("X-Service-Signature"), rawBody, now, r.toleranceSeconds)
	}
	if !verified {
		logOutcome(map[string]interface{}{"outcome": "rejected", "eventId": eventID})
		http.Error(w, "bad signature", http.StatusBadRequest)
		return
	}
	// Parse only what verified; 400 (not 500) to a body that is not a JSON object: retrying will not fix it.
	// A map, not a struct: "null" decodes into a struct without an error, and into a nil map.
	var event map[string]interface{}
	if err := json.Unmarshal(rawBody, &event); err != nil || event == nil {
		logOutcome(map[string]interface{}{"outcome": "malformed", "eventId": eventID})
		http.Error(w, "body is not a JSON object", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.processed[eventID] {
		logOutcome(map[string]interface{}{"outcome": "duplicate", "eventId": eventID})
		fmt.Fprint(w, "duplicate")
		return
	}
	// Your processing goes here.
	r.processed[eventID] = true
	logOutcome(map[string]interface{}{"outcome": "processed", "eventId": eventID, "type": event["type"], "userId": event["userId"]})
	fmt.Fprint(w, "processed")
}

type vector struct {
	Name      string            `json:"name"`
	Expected  string            `json:"expected"`
	Reason    string            `json:"reason"`
	Secret    string            `json:"secret"`
	PublicKey string            `json:"publicKey"`
	Headers   map[string]string `json:"headers"`
	Body      struct {
		Base64 string `json:"base64"`
	} `json:"body"`
	Now              int64 `json:"now"`
	ToleranceSeconds int64 `json:"toleranceSeconds"`
}

func verifyVector(scheme string, v vector) bool {
	body, _ := base64.StdEncoding.DecodeString(v.Body.Base64)
	if scheme == "ed25519" {
		publicKey, err := ed25519PublicKey(v.PublicKey)
		return err == nil && verifyEd25519(publicKey, v.Headers["webhook-id"], v.Headers["webhook-timestamp"], v.Headers["webhook-signature"], body, v.Now, v.ToleranceSeconds)
	}
	if scheme == "standard-webhooks" {
		return verifyStandardWebhook(v.Secret, v.Headers["webhook-id"], v.Headers["webhook-timestamp"], v.Headers["webhook-signature"], body, v.Now, v.ToleranceSeconds)
	}
	return verifySignature(v.Secret, v.Headers["X-Service-Timestamp"], v.Headers["X-Service-Signature"], body, v.Now, v.ToleranceSeconds)
}

func runVectors(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	var file struct {
		Vectors          []vector `json:"vectors"`
		StandardWebhooks struct {
			Vectors []vector `json:"vectors"`
		} `json:"standardWebhooks"`
		StandardWebhooksEd25519 struct {
			Vectors []vector `json:"vectors"`
		} `json:"standardWebhooksEd25519"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		log.Fatal(err)
	}
	failedInAll := 0
	for _, scheme := range []string{"x-service", "standard-webhooks", "ed25519"} {
		vectors := file.Vectors
		if scheme == "standard-webhooks" {
			vectors = file.StandardWebhooks.Vectors
		} else if scheme == "ed25519" {
			vectors = file.StandardWebhooksEd25519.Vectors
		}
		failed := 0
		for _, v := range vectors {
			verdict := "reject"
			if verifyVector(scheme, v) {
				verdict = "accept"
			}
			status := "ok  "
			if verdict != v.Expected {
				status = "FAIL"
				failed++
			}
			fmt.Printf("%s %s: %s (expected %s, %s)\n", status, v.Name, verdict, v.Expected, v.Reason)
		}
		fmt.Printf("%d/%d %s vectors passed\n", len(vectors)-failed, len(vectors), scheme)
		failedInAll += failed
	}
	if failedInAll > 0 {
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
	scheme := os.Getenv("WEBHOOK_SCHEME")
	if scheme == "" {
		scheme = "x-service"
	}
	if scheme != "x-service" && scheme != "standard-webhooks" && scheme != "ed25519" {
		log.Fatal("WEBHOOK_SCHEME is x-service, standard-webhooks or ed25519")
	}
	var publicKey ed25519.PublicKey
	if scheme == "ed25519" {
		var err error
		if publicKey, err = ed25519PublicKey(os.Getenv("WEBHOOK_PUBLIC_KEY")); err != nil {
			log.Fatalf("Set WEBHOOK_PUBLIC_KEY to the whpk_... public key the settings API shows: %v", err)
		}
	}
	secret := os.Getenv("WEBHOOK_SECRET")
	if secret == "" && scheme != "ed25519" {
		log.Fatal("Set WEBHOOK_SECRET to the whsec_... secret shown when you enabled the webhook")
	}
	if _, err := standardWebhooksKey(secret); scheme == "standard-webhooks" && err != nil {
		log.Fatalf("WEBHOOK_SECRET is not whsec_ + base64: %v", err)
	}
	tolerance := int64(300)
	if value, err := strconv.ParseInt(os.Getenv("WEBHOOK_TOLERANCE_SECONDS"), 10, 64); err == nil {
		tolerance = value
	}
	// 127.0.0.1: only this machine can reach it; HOST=0.0.0.0 takes requests from the network.
	host, port := os.Getenv("HOST"), os.Getenv("PORT")
	if host == "" {
		host = "127.0.0.1"
	}
	if port == "" {
		port = "8443"
	}
	server := &http.Server{
		Handler:           &receiver{scheme: scheme, secret: secret, publicKey: publicKey, toleranceSeconds: tolerance, processed: map[string]bool{}},
		ReadHeaderTimeout: 5 * time.Second,
	}
	listener, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		log.Fatal(err)
	}
	cert, key := os.Getenv("TLS_CERT_FILE"), os.Getenv("TLS_KEY_FILE")
	if cert != "" && key != "" {
		fmt.Printf("listening on https://%s\n", listener.Addr())
		log.Fatal(server.ServeTLS(listener, cert, key))
	}
	fmt.Printf("listening on http://%s\n", listener.Addr())
	log.Fatal(server.Serve(listener))
}
